package ingress

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = networkingv1.Resource("ingresses")

// NewREST returns the ingresses resource and its status subresource (short name "ing"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, networkingv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &networkingv1.Ingress{} },
		NewListFunc:               func() runtime.Object { return &networkingv1.IngressList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: networkingv1.Resource("ingress"),
		ResourceShortNames:        []string{"ing"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
