package controlplane

import (
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/deviceclass"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/devicetaintrule"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/resourceclaim"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/resourceclaimtemplate"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/resourceslice"
)

// resourceGroup is the table of resource.k8s.io (dynamic resource
// allocation). kube-apiserver v1.37 serves v1 by default (GA in v1.34);
// v1beta1 and v1beta2 are off by default. DeviceTaintRules are v1 (and
// served by default) since v1.37.
var resourceGroup = apiGroup{name: resourcev1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "deviceclasses", storage: storeOf(deviceclass.NewREST)},
		{name: "devicetaintrules", storage: storeAndStatus(devicetaintrule.NewREST)},
		{name: "resourceclaims", storage: storeAndStatus(resourceclaim.NewREST)},
		{name: "resourceclaimtemplates", storage: storeOf(resourceclaimtemplate.NewREST)},
		{name: "resourceslices", storage: storeOf(resourceslice.NewREST), fieldLabels: resourceslice.FieldLabelConversion},
	},
}}}
