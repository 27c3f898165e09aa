package runtimeclass

import (
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = nodev1.Resource("runtimeclasses")

// NewREST returns the completed store of runtimeclasses, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, nodev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &nodev1.RuntimeClass{} },
		NewListFunc:               func() runtime.Object { return &nodev1.RuntimeClassList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: nodev1.Resource("runtimeclass"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
