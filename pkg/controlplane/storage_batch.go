package controlplane

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/cronjob"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/job"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// batchGroup is the table of batch: Jobs and CronJobs, each with status.
var batchGroup = apiGroup{name: batchv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "cronjobs", storage: storeAndStatus(cronjob.NewREST)},
		{name: "jobs", storage: storeAndStatus(job.NewREST), fieldLabels: job.FieldLabelConversion},
	},
}}}

// storeAndStatus is the storage func of a resource that is a generic store
// with a status subresource.
func storeAndStatus(newREST func(generic.RESTOptions) (*generic.Store, *generic.StatusREST, error)) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		st, status, err := newREST(b.opts)
		if err != nil {
			return resourceStorage{}, err
		}
		return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status}}, nil
	}
}
