package csidriver

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = storagev1.Resource("csidrivers")

// NewREST returns the completed store of csidrivers, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, storagev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &storagev1.CSIDriver{} },
		NewListFunc:               func() runtime.Object { return &storagev1.CSIDriverList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: storagev1.Resource("csidriver"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
