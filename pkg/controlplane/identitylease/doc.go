// Package identitylease keeps kube-apiserver's identity Lease and collects
// the expired ones of other API servers, as kube-apiserver v1.37 does with
// its APIServerIdentity feature (beta, on by default): upstream's
// k8s.io/component-helpers/apimachinery/lease controller, the
// labelAPIServerHeartbeatFunc and the hooks of
// k8s.io/kubernetes pkg/controlplane/apiserver/server.go, the garbage
// collector of pkg/controlplane/controller/apiserverleasegc, and the
// identity of k8s.io/apiserver pkg/server/config.go.
//
// Every API server holds the Lease kube-system/<ID> (ID: a hash of its
// host name), labelled apiserver.kubernetes.io/identity=kube-apiserver and
// kubernetes.io/hostname=<host name>, annotated
// kubernetes.io/peer-advertise-address=<address>:<port>, held by
// "<ID>_<uuid of this run>" for 3600 s and renewed every 10 s. A server
// deletes a Lease of its ID left from an earlier run when it starts and its
// own when it stops; each server deletes every identity Lease whose renewal
// is older than its duration, once an hour.
//
// The controllers write through a client of the server (kapi's in-process
// loopback client, as system:apiserver, user agent kube-apiserver/...):
// the Leases' managed fields name manager kube-apiserver, as the
// reference's do.
package identitylease
