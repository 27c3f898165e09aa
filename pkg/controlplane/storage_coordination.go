package controlplane

import (
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/lease"
)

// coordinationGroup is the table of coordination.k8s.io.
var coordinationGroup = apiGroup{name: coordinationv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "leases", storage: storeOf(lease.NewREST)},
	},
}}}
