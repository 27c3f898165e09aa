// Package installer serves one API group-version: it builds, from each
// resource's storage (pkg/registry/rest interfaces), the REST handlers of
// pkg/endpoints/handlers, routes requests to them by the RequestInfo on
// the context (a map lookup per request), answers legacy discovery (the
// APIResourceList) on the group-version's root, and registers that root
// with a server's APIServerHandler.
package installer
