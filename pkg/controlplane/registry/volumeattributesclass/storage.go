package volumeattributesclass

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = storagev1.Resource("volumeattributesclasses")

// NewREST returns the completed store of volumeattributesclasses (short name "vac"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, storagev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &storagev1.VolumeAttributesClass{} },
		NewListFunc:               func() runtime.Object { return &storagev1.VolumeAttributesClassList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: storagev1.Resource("volumeattributesclass"),
		ResourceShortNames:        []string{"vac"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
