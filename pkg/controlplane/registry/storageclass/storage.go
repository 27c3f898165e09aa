package storageclass

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = storagev1.Resource("storageclasses")

// NewREST returns the completed store of storageclasses (short name "sc"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, storagev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &storagev1.StorageClass{} },
		NewListFunc:               func() runtime.Object { return &storagev1.StorageClassList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: storagev1.Resource("storageclass"),
		ResourceShortNames:        []string{"sc"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
