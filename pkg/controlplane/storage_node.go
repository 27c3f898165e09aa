package controlplane

import (
	nodev1 "k8s.io/api/node/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/runtimeclass"
)

// nodeGroup is the table of node.k8s.io: RuntimeClasses, v1 only.
var nodeGroup = apiGroup{name: nodev1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "runtimeclasses", storage: storeOf(runtimeclass.NewREST)},
	},
}}}
