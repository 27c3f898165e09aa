package validatingwebhookconfiguration

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = arv1.Resource("validatingwebhookconfigurations")

// NewREST returns the validatingwebhookconfigurations resource on the
// storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, arv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &arv1.ValidatingWebhookConfiguration{} },
		NewListFunc:               func() runtime.Object { return &arv1.ValidatingWebhookConfigurationList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: arv1.Resource("validatingwebhookconfiguration"),
		ResourceCategories:        []string{"api-extensions"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
