package flowschema

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = flowcontrolv1.Resource("flowschemas")

// NewREST returns the flowschemas resource and its status subresource.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, flowcontrolv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
		NewListFunc:               func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: flowcontrolv1.Resource("flowschema"),
		NameValidator:             generic.ValidatePathSegmentName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
