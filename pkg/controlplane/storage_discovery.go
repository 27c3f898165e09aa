package controlplane

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/endpointslice"
)

// discoveryGroup is the table of discovery.k8s.io.
var discoveryGroup = apiGroup{name: discoveryv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "endpointslices", storage: storeOf(endpointslice.NewREST)},
	},
}}}

// endpointSlicesResource is the endpointslices line (the bootstrap
// controller writes the "kubernetes" EndpointSlice).
var endpointSlicesResource = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
