// Package serviceresolver turns a reference to a Service (namespace,
// name, port) into the https address that reaches it, for every client
// kapi itself sends requests to a Service with: the aggregator's proxy and
// availability checks (an APIService's spec.service) and webhook clients
// (a CRD's conversion webhook today, admission webhooks later:
// clientConfig.service). It imports no server package.
//
// # Resolution ([Resolve])
//
// kapi has no cluster network, so it never dials a cluster IP: it always
// routes to endpoints, as kube-apiserver does with
// --enable-aggregator-routing.
//
//   - ClusterIP, NodePort and LoadBalancer services: the Service port
//     whose number is the reference's port selects, by its name, the
//     endpoint port; the address is one ready endpoint chosen at random,
//     read from the Service's EndpointSlices (IPv4 and IPv6 ones), or from
//     its Endpoints if it has no EndpointSlice. Errors are upstream's
//     ("no service port %d found for service %q", "no endpoints available
//     for service %q", both 503 ServiceUnavailable API errors).
//   - ExternalName services: https://<spec.externalName>:<port>, where port
//     is the reference's port itself (an APIService's spec.service.port, a
//     webhook's service port; both 443 when unset, defaulted by their
//     owners before they call [Resolve]). The Service's own ports are not
//     consulted, and it needs none. This is what upstream's cluster-IP
//     resolver does (k8s.io/apiserver pkg/util/proxy ResolveCluster,
//     behind kube-aggregator's NewClusterIPServiceResolver, which
//     kube-apiserver uses for the aggregator and webhooks by default).
//     Upstream's endpoint resolver (ResolveEndpoint, used with
//     --enable-aggregator-routing) refuses ExternalName services; kapi,
//     which always routes to endpoints, resolves them as the default
//     resolver does, so that a backend outside any cluster, or on this
//     machine's loopback interface (externalName: localhost), can be
//     reached. Endpoints themselves may not be loopback addresses (as
//     upstream validates them), so this is the way to register a local
//     backend.
//   - Any other type is an error ("unsupported service type %q").
//
// Whatever the address, clients verify the backend's certificate for the
// Service's in-cluster name, [ServerName] (<service>.<namespace>.svc), as
// kube-aggregator's proxy and upstream's webhook client do, never for the
// external name or endpoint address.
//
// # Webhook clients ([RoundTripper])
//
// A webhook client addresses a service reference as
// https://<service>.<namespace>.svc:<port>/<path> ([HostPort]); the
// [RoundTripper] sends each request for that host to the address resolved
// at that moment, keeping the Host header, as upstream's webhook client
// does in its dialer.
package serviceresolver
