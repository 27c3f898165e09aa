package csistoragecapacity

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = storagev1.Resource("csistoragecapacities")

// NewREST returns the completed store of csistoragecapacities, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, storagev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
		NewListFunc:               func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: storagev1.Resource("csistoragecapacity"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		// No TableConvertor: kube-apiserver v1.37.2 serves this resource
		// with the default table (NAME, CREATED AT; pkg/registry/storage/
		// csistoragecapacity/storage at k8s.io/kubernetes v1.37.2 sets
		// rest.NewDefaultTableConvertor, and that is what the binary
		// answers), although its printers package has a printer for it.
	})
}
