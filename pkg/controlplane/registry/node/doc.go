// Package node serves core/v1 nodes (cluster-scoped, short name "no") and
// their status subresource, as kube-apiserver does: a node may be created
// with its status (kubelets register that way), updates of the main
// resource keep the stored status and /status keeps the spec; nodes can be
// selected by spec.unschedulable; tables show kubectl's NAME STATUS ROLES
// AGE VERSION and, with -o wide, INTERNAL-IP EXTERNAL-IP OS-IMAGE
// KERNEL-VERSION CONTAINER-RUNTIME.
//
// nodes/{[scheme:]name[:port]}/proxy/{path} (ProxyREST) forwards a request
// to the node's kubelet (its address of the first preferred type, the
// kubelet port, https) or to another port of that address, as upstream:
// through the kubelet client of package kubelet, never to a loopback,
// link-local or unspecified address.
//
// No kubelet runs behind kapi: node objects stay as their writers leave
// them (no node lifecycle controller marks them NotReady).
package node
