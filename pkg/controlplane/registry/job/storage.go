package job

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = batchv1.Resource("jobs")

// NewREST returns the jobs resource (category "all") and its status
// subresource, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, batchv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &batchv1.Job{} },
		NewListFunc:               func() runtime.Object { return &batchv1.JobList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: batchv1.Resource("job"),
		ResourceCategories:        []string{"all"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		DeleteStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
