package serviceaccount

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = corev1.Resource("serviceaccounts")

// NewREST returns the completed store of core/v1 serviceaccounts (short
// name "sa"), on the storage opts makes for it. The token subresource
// (TokenRequest) is not served.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.ServiceAccount{} },
		NewListFunc:               func() runtime.Object { return &corev1.ServiceAccountList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("serviceaccount"),
		ResourceShortNames:        []string{"sa"},
		NameValidator:             validation.ValidateServiceAccountName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

// TableConvertor renders serviceaccounts as kube-apiserver v1.37.2 does:
// NAME AGE (printServiceAccount, pkg/printers/internalversion/printers.go
// at k8s.io/kubernetes v1.37.2; observed on that binary). The SECRETS
// column of older releases is gone upstream.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		sa, ok := obj.(*corev1.ServiceAccount)
		if !ok {
			return nil, false
		}
		return []any{sa.Name, table.Since(sa.CreationTimestamp)}, true
	},
}
