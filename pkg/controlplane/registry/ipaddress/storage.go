package ipaddress

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/networking"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = networkingv1.Resource("ipaddresses")

// NewREST returns the completed store of ipaddresses (short name "ip"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, networkingv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &networkingv1.IPAddress{} },
		NewListFunc:               func() runtime.Object { return &networkingv1.IPAddressList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: networkingv1.Resource("ipaddress"),
		ResourceShortNames:        []string{"ip"},
		NameValidator:             networking.ValidateIPAddressName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
