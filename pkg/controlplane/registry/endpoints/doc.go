// Package endpoints serves core/v1 endpoints (short name "ep"), validated
// as kube's ValidateEndpoints, with port protocols defaulted to TCP and the
// subsets repacked into kube's canonical form (one subset per distinct
// set of addresses, addresses and ports sorted).
//
// No endpoints controller runs in kapi: as in Kubernetes, where the
// endpoints and endpointslice controllers run in kube-controller-manager,
// not in the API server, Endpoints and EndpointSlices are written by
// clients (the one exception is the "kubernetes" Service's, which the
// control plane's bootstrap controller keeps).
package endpoints
