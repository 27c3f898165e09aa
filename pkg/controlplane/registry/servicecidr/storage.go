package servicecidr

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = networkingv1.Resource("servicecidrs")

// NewREST returns the servicecidrs resource and its status subresource, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, networkingv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &networkingv1.ServiceCIDR{} },
		NewListFunc:               func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: networkingv1.Resource("servicecidr"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
