// Package proxy forwards requests for an aggregated API to the service
// behind its APIService, as kube-aggregator does with
// --enable-aggregator-routing: the service port is resolved (package
// serviceresolver) to a ready endpoint (EndpointSlices first, Endpoints as
// a fallback; an ExternalName service resolves to its external name and
// the APIService's port, as upstream's default resolver does), the
// backend is verified against the APIService's caBundle as
// <service>.<namespace>.svc, the front-proxy client certificate is
// presented, and the user travels in X-Remote-* headers. Watches stream
// and upgrade requests (exec, port-forward, websockets) pass through.
package proxy
