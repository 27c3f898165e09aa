// Package componentstatus serves core/v1 componentstatuses (cluster-scoped,
// short name "cs", get and list only; deprecated upstream since v1.19 but
// still served), as kube-apiserver does: no object is stored, each get or
// list probes the components live and reports one Healthy condition per
// component.
//
// The components are upstream's: "scheduler" and "controller-manager",
// probed at https://127.0.0.1:10259/healthz and https://127.0.0.1:10257/healthz
// (their default secure ports, certificates not verified), and one
// "etcd-<n>" per storage backend, probed through the storage's own health
// check. A component that does not answer is reported Unhealthy with the
// error as its message, as upstream does; kapi runs no scheduler or
// controller manager, so those two are Unhealthy unless something else
// serves those ports.
package componentstatus
