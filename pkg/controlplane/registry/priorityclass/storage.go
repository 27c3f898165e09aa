package priorityclass

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = schedulingv1.Resource("priorityclasses")

// newStore returns the completed store of priorityclasses (short name "pc"), on the storage opts makes for it.
func newStore(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, schedulingv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &schedulingv1.PriorityClass{} },
		NewListFunc:               func() runtime.Object { return &schedulingv1.PriorityClassList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: schedulingv1.Resource("priorityclass"),
		ResourceShortNames:        []string{"pc"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
