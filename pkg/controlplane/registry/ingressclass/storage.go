package ingressclass

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = networkingv1.Resource("ingressclasses")

// NewREST returns the completed store of ingressclasses, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, networkingv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &networkingv1.IngressClass{} },
		NewListFunc:               func() runtime.Object { return &networkingv1.IngressClassList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: networkingv1.Resource("ingressclass"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
