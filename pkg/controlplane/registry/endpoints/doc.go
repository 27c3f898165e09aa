// Package endpoints serves core/v1 endpoints (short name "ep"), validated
// as kube's ValidateEndpoints, with port protocols defaulted to TCP and the
// subsets stored in the order and grouping the client gave (as
// kube-apiserver v1.37, which does not repack them).
//
// No endpoints controller runs in kapi: as in Kubernetes, where the
// endpoints and endpointslice controllers run in kube-controller-manager,
// not in the API server, Endpoints and EndpointSlices are written by
// clients (the one exception is the "kubernetes" Service's, which the
// control plane's bootstrap controller keeps).
package endpoints
