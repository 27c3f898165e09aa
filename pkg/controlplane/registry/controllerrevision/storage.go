package controllerrevision

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = appsv1.Resource("controllerrevisions")

// NewREST returns the store of apps/v1 controllerrevisions (no short
// name, no category), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, appsv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &appsv1.ControllerRevision{} },
		NewListFunc:               func() runtime.Object { return &appsv1.ControllerRevisionList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: appsv1.Resource("controllerrevision"),
		NameValidator:             appsvalidation.ValidateControllerRevisionName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}
