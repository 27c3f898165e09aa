package mutatingwebhookconfiguration

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = arv1.Resource("mutatingwebhookconfigurations")

// NewREST returns the mutatingwebhookconfigurations resource on the
// storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, arv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &arv1.MutatingWebhookConfiguration{} },
		NewListFunc:               func() runtime.Object { return &arv1.MutatingWebhookConfigurationList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: arv1.Resource("mutatingwebhookconfiguration"),
		ResourceCategories:        []string{"api-extensions"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
