// Package rest declares the small capability interfaces a resource's
// storage implements (Getter, Lister, Creater, Updater, ...). The REST
// handlers in pkg/endpoints discover what a resource supports by type
// assertion, as kube-apiserver's installer does; the generic store in
// pkg/registry/generic implements them all from a per-resource strategy.
//
// Objects are the versioned types of k8s.io/api (and unstructured for
// custom resources): kapi has no internal API versions.
package rest
