// Package pod serves core/v1 pods and their subresources as
// kube-apiserver does (pkg/registry/core/pod, kubernetes v1.37): the pod
// strategy (create-time fields, most of the spec immutable, status only
// through /status, graceful deletion), pods/status, pods/binding (the
// scheduler's write), pods/ephemeralcontainers and pods/resize, the
// connection subresources pods/log, exec, attach, portforward and proxy,
// field selectors and the kubectl table.
//
// Graceful deletion without a kubelet: a pod that is not scheduled
// (no spec.nodeName) or already terminated is deleted at once; a scheduled
// one gets a deletionTimestamp and its grace period and stays until it is
// deleted again with a zero grace period (kubectl delete --force): nothing
// but a kubelet (or kube-controller-manager's pod GC) would finish the
// deletion, and kapi runs neither. This is what a kube-apiserver started
// alone does.
//
// The connection subresources find the pod's kubelet through the nodes
// resource (its preferred address and kubelet port) and proxy to it as
// upstream does, without verifying the kubelet's serving certificate
// (upstream's default without --kubelet-certificate-authority). With no
// kubelet reachable they answer what kube-apiserver answers.
package pod
