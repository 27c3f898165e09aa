package configmap

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = corev1.Resource("configmaps")

// NewREST returns the completed store of core/v1 configmaps (short name
// "cm"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:               func() runtime.Object { return &corev1.ConfigMapList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("configmap"),
		ResourceShortNames:        []string{"cm"},
		NameValidator:             validation.ValidateConfigMapName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

// TableConvertor renders configmaps as kubectl shows them: NAME DATA AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil, false
		}
		return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), table.Since(cm.CreationTimestamp)}, true
	},
}
