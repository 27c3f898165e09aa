package controlplane

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/controllerrevision"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/daemonset"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/deployment"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/replicaset"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/statefulset"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// appsGroup is the table of apps.
var appsGroup = apiGroup{name: appsv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "deployments", storage: scalableStorage(deployment.NewREST)},
		// No field label conversion: upstream registers none for apps/v1
		// ReplicaSets (only for the older versions), so the scheme's default
		// one refuses status.replicas although the registry has the field
		// (kube-apiserver v1.37.2: '"status.replicas" is not a known field
		// selector: only "metadata.name", "metadata.namespace"').
		{name: "replicasets", storage: scalableStorage(replicaset.NewREST)},
		{name: "statefulsets", storage: scalableStorage(statefulset.NewREST)},
		{name: "daemonsets", storage: daemonSetStorage},
		{name: "controllerrevisions", storage: storeOf(controllerrevision.NewREST)},
	},
}}}

// scalableStorage is the storage func of a workload with status and
// scale subresources.
func scalableStorage(newREST func(generic.RESTOptions) (*generic.Store, *generic.StatusREST, workload.ScaleREST, error)) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		st, status, scale, err := newREST(b.opts)
		if err != nil {
			return resourceStorage{}, err
		}
		return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status, "scale": scale}}, nil
	}
}

// daemonSetStorage is the daemonsets line: the resource and its status.
func daemonSetStorage(b *storageBuilder) (resourceStorage, error) {
	st, status, err := daemonset.NewREST(b.opts)
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status}}, nil
}
