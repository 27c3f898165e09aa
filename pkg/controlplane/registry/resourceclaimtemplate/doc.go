// Package resourceclaimtemplate is the storage of resource.k8s.io/v1
// ResourceClaimTemplates, with upstream's strategy (kubernetes
// pkg/registry/resource/resourceclaimtemplate, v1.37): the spec is
// immutable.
package resourceclaimtemplate
