// Package controllerruntime proves that a controller-runtime manager runs
// against kapi as against kube-apiserver: caches (list+watch), a reconciler
// with status updates, owned objects, finalizers, leader election on
// leases and deletion. It lives in its own package so that only these
// tests pull controller-runtime into the build.
package controllerruntime
