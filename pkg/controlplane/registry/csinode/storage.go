package csinode

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = storagev1.Resource("csinodes")

// NewREST returns the csinodes resource and its status subresource
// (served since v1.37: upstream's pkg/registry/storage/csinode/storage), on
// the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, storagev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &storagev1.CSINode{} },
		NewListFunc:               func() runtime.Object { return &storagev1.CSINodeList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: storagev1.Resource("csinode"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
