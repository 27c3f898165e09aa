package controlplane

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/flowschema"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/prioritylevelconfiguration"
)

// flowcontrolGroup is the table of flowcontrol.apiserver.k8s.io: API
// Priority and Fairness configuration, each with status. The mandatory and
// suggested objects are created and kept up to date by the APF config
// controller (pkg/server/flowcontrol), which also enforces them.
var flowcontrolGroup = apiGroup{name: flowcontrolv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "flowschemas", storage: storeAndStatus(flowschema.NewREST)},
		{name: "prioritylevelconfigurations", storage: storeAndStatus(prioritylevelconfiguration.NewREST)},
	},
}}}
