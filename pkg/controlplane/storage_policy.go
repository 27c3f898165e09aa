package controlplane

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/poddisruptionbudget"
)

// policyGroup is the table of policy: PodDisruptionBudgets with status.
// (Evictions are a subresource of pods, in the core group's table.)
var policyGroup = apiGroup{name: policyv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "poddisruptionbudgets", storage: storeAndStatus(poddisruptionbudget.NewREST)},
	},
}}}
