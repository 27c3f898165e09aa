package secret

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = corev1.Resource("secrets")

// NewREST returns the completed store of core/v1 secrets (no short name),
// on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Secret{} },
		NewListFunc:               func() runtime.Object { return &corev1.SecretList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("secret"),
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             validation.ValidateSecretName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

// TableConvertor renders secrets as kubectl shows them: NAME TYPE DATA AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return nil, false
		}
		return []any{s.Name, string(s.Type), int64(len(s.Data)), table.Since(s.CreationTimestamp)}, true
	},
}
