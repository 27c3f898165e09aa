package controlplane

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/eviction"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/pod"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/poddisruptionbudget"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// policyGroup is the table of policy: PodDisruptionBudgets with status.
// (Evictions are a subresource of pods, in the core group's table.)
var policyGroup = apiGroup{name: policyv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "poddisruptionbudgets", storage: storeAndStatus(poddisruptionbudget.NewREST)},
	},
}}}

var pdbResource = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")

// addEviction adds pods/eviction to the pods line's subresources: evictions
// delete pods through the pods' storage (the DisruptionTarget condition
// through pods/status) and consume the budgets of the policy line. Without
// a policy line (a table without budgets) there is no eviction.
func addEviction(b *storageBuilder, pods *pod.Storage, subresources map[string]rest.Storage) error {
	if _, ok := b.lines[pdbResource]; !ok {
		return nil
	}
	budgets, err := storageAs[*generic.Store](b, pdbResource)
	if err != nil {
		return err
	}
	budgetStatus, err := subresourceAs[*generic.StatusREST](b, pdbResource, "status")
	if err != nil {
		return err
	}
	subresources["eviction"] = eviction.NewREST(pods.Pod, pods.Status, budgets, budgetStatus)
	return nil
}
