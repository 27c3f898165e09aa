package networkpolicy

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = networkingv1.Resource("networkpolicies")

// NewREST returns the completed store of networkpolicies (short name "netpol"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, networkingv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &networkingv1.NetworkPolicy{} },
		NewListFunc:               func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: networkingv1.Resource("networkpolicy"),
		ResourceShortNames:        []string{"netpol"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
