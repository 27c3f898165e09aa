package node

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = corev1.Resource("nodes")

// NewREST returns the completed store of core/v1 nodes and their status
// subresource, on the storage opts makes for them.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Node{} },
		NewListFunc:               func() runtime.Object { return &corev1.NodeList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("node"),
		ResourceShortNames:        []string{"no"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             core.ValidateNodeName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
