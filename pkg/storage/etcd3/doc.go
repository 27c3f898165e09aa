// Package etcd3 implements [storage.Interface] on etcd's v3 API
// (go.etcd.io/etcd/client/v3), against an external cluster or the embedded
// server of package embedded.
//
// Keys are <prefix><key>: with the default prefix "/registry" the caller's
// key "/configmaps/default/foo" is stored at "/registry/configmaps/default/foo".
// Writes are etcd transactions on the key's ModRevision, so concurrent
// writers never lose an update; every object returned carries the revision
// of its last write as metadata.resourceVersion.
//
// Beyond the contract of [storage.Interface]:
//   - Encoded objects larger than [MaxObjectSize] are rejected with
//     ErrCodeRequestTooLarge before reaching etcd.
//   - A deleted object (Delete's out, a DELETED watch event) carries the
//     revision of the deletion, as kube-apiserver's etcd3 store.
//   - An ErrCodeContinueExpired error wraps a [*storage.ContinueExpiredError]
//     whose Continue field is a fresh token resuming the list at the latest
//     revision (kube returns it in the 410 Status's metadata.continue; see
//     storage.ContinueHint).
//   - A watch whose start revision gets compacted delivers one watch.Error
//     event with a *metav1.Status (410 Expired) and closes; other watch
//     failures deliver a 500 Status the same way.
//   - Progress notifications (ListOptions.ProgressNotify) become BOOKMARK
//     events only for watches with Predicate.AllowWatchBookmarks. They come
//     at etcd's --watch-progress-notify-interval (embedded.Config
//     WatchProgressNotifyInterval; tell the store through
//     Config.ProgressNotifyInterval). etcd >= 3.6 sends none to a watch
//     before the store's revision passes the watch's start, so a watch that
//     hears nothing for an interval sends its own BOOKMARK at the last
//     revision it knows complete. Such a watch also gets a BOOKMARK right
//     after the events of each etcd watch response, at the last one's
//     revision: a revision's events (a transaction's, several keys at one
//     revision) come in one response, so the bookmark tells a watch cache
//     the revision is complete (Store.MarksRevisionEnds).
//   - The initial-events-end BOOKMARK of SendInitialEvents is sent only
//     with Predicate.AllowWatchBookmarks, as kube.
//   - A resourceVersion newer than etcd's revision fails at once with
//     ErrCodeTooLargeResourceVersion (one etcd has nothing newer to wait
//     for).
//   - [Store.RequestWatchProgress] (the cacher's ProgressRequester) asks
//     etcd for a progress notification on the gRPC watch stream that every
//     watch of the stores of one client shares: all watches and progress
//     requests use one fixed gRPC metadata (require-leader), because
//     clientv3 picks a watch's stream by its context's outgoing metadata.
//
// [StartCompactor] compacts history periodically, coordinated through etcd
// between several servers sharing one cluster; [NewHealthCheck] is the probe
// behind the etcd and etcd-readiness health checks.
package etcd3
