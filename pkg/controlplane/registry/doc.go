// Package registry holds what the core server's resources share: the
// [Options] every resource's NewREST takes (a [StorageFactory] that makes
// the storage of one resource) and a [MemoryStorage] factory on the
// memory backend. The resources themselves live in the sub-packages
// (namespace, configmap, secret, serviceaccount, event, lease, service,
// endpoints, endpointslice, selfsubjectreview), each with
// its strategy and a NewREST returning a configured generic.Store.
package registry
