package cronjob

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = batchv1.Resource("cronjobs")

// NewREST returns the cronjobs resource (short name "cj", category "all")
// and its status subresource, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, batchv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &batchv1.CronJob{} },
		NewListFunc:               func() runtime.Object { return &batchv1.CronJobList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: batchv1.Resource("cronjob"),
		ResourceShortNames:        []string{"cj"},
		ResourceCategories:        []string{"all"},
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
