// Package controlplane is the core API server's content: the built-in
// resources it serves (with their storage), the bootstrap objects it
// creates, and the in-process controllers kapi runs so that it behaves as a
// cluster would without kube-controller-manager for them (namespace
// deletion).
package controlplane
