// Package garbagecollector is the garbage-collector-controller of
// kube-controller-manager, run in-process against the server's own API
// through a loopback client: objects whose owners are gone are deleted,
// with the background, foreground and orphan propagation policies.
//
// The behaviour is upstream's (kubernetes pkg/controller/garbagecollector,
// v1.37); the code is kapi's own. The shape:
//
//	discovery ──every SyncPeriod, and when CRDs or APIServices change──┐
//	                                                                    v
//	one metadata-only informer per deletable resource (monitors) ──events──> graph builder
//	                                                                    (one goroutine)
//	                 graph: uid -> node{identity, owners, dependents}   │
//	                                            ┌───────────────────────┤
//	                                            v                       v
//	                          attemptToDelete queue           attemptToOrphan queue
//	                          (Workers goroutines)             (Workers goroutines)
//	                          delete garbage, finish           strip the owner from its
//	                          foreground deletions             dependents, then its
//	                                                           "orphan" finalizer
//
// Rules (upstream's):
//   - A node exists for every object observed and, as a "virtual" node, for
//     every owner referenced but not (yet) observed; virtual nodes are
//     checked against the API and removed (with a virtual delete event) when
//     the owner does not exist, which makes their dependents garbage.
//   - An owner reference is dangling when the owner does not exist or exists
//     with another UID; an item all of whose owners are dangling (or are
//     waiting for their dependents' deletion) is deleted, with the policy its
//     own finalizers ask for (orphan, foreground) or in the background. An
//     item with at least one live owner only loses its dangling references.
//   - An owner being deleted in the foreground (deletionTimestamp and the
//     "foregroundDeletion" finalizer) deletes its dependents and loses the
//     finalizer once no dependent blocks it (blockOwnerDeletion). A dependent
//     that itself has dependents is deleted in the foreground; if one of its
//     own dependents is also waiting (a cycle), its references are first
//     made non-blocking, so a cycle of owners terminates.
//   - An owner with the "orphan" finalizer and a deletionTimestamp has its
//     reference removed from every dependent, then loses the finalizer.
//   - Events (core and events.k8s.io) are not watched, as upstream.
//
// Reads of the item and of its owners use the informers' caches when they
// hold the object (upstream reads the API every time); the delete carries
// UID and resourceVersion preconditions, and a conflict re-reads the live
// object, so a stale cache can delay a decision but never make a wrong one.
package garbagecollector
