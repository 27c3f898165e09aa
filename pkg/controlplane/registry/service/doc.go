// Package service serves core/v1 services (short name "svc", category
// "all") and their status subresource, as kube-apiserver does:
//
//   - defaults are kube's v1 defaults (protocol TCP, targetPort = port,
//     sessionAffinity None, type ClusterIP, internalTrafficPolicy Cluster,
//     externalTrafficPolicy Cluster when externally accessible,
//     allocateLoadBalancerNodePorts true for LoadBalancers), then
//     ipFamilyPolicy and ipFamilies for the single family of the
//     cluster's service range;
//   - a ClusterIP is allocated (or the requested one taken) for every type
//     but ExternalName and headless services, and NodePorts for NodePort
//     and LoadBalancer ports (and a healthCheckNodePort for LoadBalancers
//     with externalTrafficPolicy Local), from the [allocator] package;
//     they are released when the service is deleted, when an update stops
//     using them, and when the write that allocated them fails;
//   - an update that omits allocated values (clusterIP, nodePorts) keeps
//     them; one that changes the type drops the fields the new type does
//     not use when the client left them unchanged;
//   - writes to the main resource keep the status; /status writes change
//     only the status.
//
// There is no deletecollection, as kube.
package service
