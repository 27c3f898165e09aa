// Package cacher is the watch cache: a [storage.Interface] for one resource
// that sits in front of another storage.Interface (etcd3, usually) and
// serves watches and most lists from memory, as kube-apiserver's cacher.
//
// A [Cacher] keeps one underlying watch, recursive on its resource prefix,
// shared by all of its watchers. It starts like a reflector: a list of the
// prefix, then a watch from the list's revision; when that watch ends it
// re-watches from the last revision seen, and when the revision is gone
// (410) it relists. A relist terminates every watcher of the cache (their
// result channels close): their clients re-watch from their last revision,
// and get 410 Expired if that revision is older than the relist, so they
// relist too.
//
// # What is served from memory
//
//   - Watch from "", "0" or a revision N in the event window. Older than the
//     window: ErrCodeExpired (410), the client relists. "" is consistent:
//     the initial state is at least as new as the underlying store's
//     current revision.
//   - GetList with resourceVersion "" (consistent: once the cache has caught
//     up with the underlying store's CurrentRevision), "0" (any state; Limit
//     is ignored and the whole list is returned, as kube's watch cache
//     does), and "N" NotOlderThan; with a Limit, the first page of each.
//   - GetList at exactly a revision (match Exact, the legacy paginated list
//     at N, and continue tokens) when the cache holds a snapshot of that
//     revision, or its current state is that revision's; a continue token
//     of the latest revision (-1, handed out with a 410) as a consistent
//     list from its key on, as kube's watch cache serves it.
//   - Get with resourceVersion "0", or "N" once the cache has reached N,
//     and "" (consistent) once the cache has reached a revision of the
//     underlying store read after the Get arrived. Concurrent consistent
//     gets share that read (one in flight, the gets arriving meanwhile
//     join the next; see revisionReads). Upstream (v1.37) serves
//     consistent lists from its watch cache but not gets.
//
// Everything else goes to the underlying store: writes (the cache learns of
// them through its watch; as upstream's cacher, GuaranteedUpdate hands the
// store the cached object as its first guess, saving a read), exact lists and continue tokens of
// revisions the cache has no snapshot of, and any read the cache cannot
// answer in time (not initialized yet, or not caught up within
// Config.ConsistentReadWait). resourceVersions and remainingItemCount are
// the underlying store's. Continue tokens are too, but for the form of
// their start key: kube's watch cache trims the list's key from it
// ("/cm1\u0000"), its etcd3 store the key's directory ("cm1\u0000"), and
// the cache writes the watch cache's (the store's with
// Config.StoreContinueTokens: for resources kube-apiserver does not cache).
// Both forms resume the same list, so a client may page across the two.
//
// # Snapshots (pagination)
//
// The current objects are a slice sorted by key, shared copy-on-write: a
// snapshot is the slice itself (taking one costs nothing; the next write
// copies the pointers once). The first page of a paginated list that has
// more records a snapshot valid for every revision from the last change of
// the cache's objects to the cache's revision; its continue token carries
// that revision, and the next pages are read from the snapshot, whatever
// was written since. Upstream (KEP-4988) clones a B-tree on every event;
// kapi snapshots only states that a paginated list read, so idle resources
// and writes cost nothing extra. Snapshots are kept Config.SnapshotTTL
// (75s, as long as kube keeps watch history), at most Config.MaxSnapshots,
// and dropped when the cache relists or learns of a compaction; without a
// snapshot a token is served by the underlying store, which answers 410
// for a compacted revision.
//
// # Consistency checks
//
// With Config.ConsistencyCheckPeriod (kapi sets it, as kube-apiserver's
// DetectCacheInconsistency, on the caches kube-apiserver has) the cache
// compares a digest of its list with the underlying store's list at the
// same revision, every 5 to 7.5 minutes, and counts the outcome. After a
// failure, exact lists and continue tokens are served by the underlying
// store until a check succeeds; see consistency.go.
//
// # Catching up
//
// The cache's revision advances with the events of its own prefix and with
// the BOOKMARKs (progress notifications) of its underlying watch. Writes to
// other resources raise the global revision without an event here, so a
// consistent read waits for a bookmark. If the underlying store implements
// [ProgressRequester] (etcd3.Store does, with etcd's RequestProgress, and so
// does memory.Store) the cache asks for one while reads wait; otherwise it
// relies on the store's periodic progress notifications and falls back to
// the underlying store after ConsistentReadWait.
//
// # Several events at one revision
//
// An etcd transaction changing several keys under the prefix (a ranged
// delete, another client's multi-key txn) makes several events at one
// revision, in the transaction's order. The cache keeps them all, in that
// order: watchers get every one, a watch from revision N gets the events
// of revisions after N (all of a transaction's, or none), and the events
// are numbered (event.seq) so that a watcher catching up from the window
// skips exactly what it already has. Over a store that marks the end of
// each revision ([RevisionEndMarker]: etcd3.Store), a revision is applied
// whole, once complete, so reads, snapshots and the cache's revision never
// show half of one; if the underlying watch ends in the middle of one, the
// cache drops what it held and the new watch, from the revision before,
// brings it again.
//
// # Fan-out and memory
//
// Each watcher has a bounded buffer (Config.WatcherBuffer). Events are
// dispatched outside the cache's lock, by the reflector, in order: first
// to every watcher with room; then the watchers whose buffers are full are
// waited for, together, within a time budget (Config.DispatchBudget, which
// refills by Config.DispatchBudgetRefill per second), as kube's watch
// cache does. Unlike kube, a watcher still full when the budget is spent
// is not closed (each closure costs its client a relist): it is marked
// lagging, the dispatcher skips it, and its own goroutine catches up from
// the event window once it reads again. Only a watcher whose next event
// has left the window is terminated (its result channel closes; resuming
// from its last revision is 410 and its client relists). A busy but healthy
// watcher is thus never closed, and a stuck one delays the others at most
// once by the budget.
// Bookmarks carry the revision dispatched so far, never ahead of an event. The
// cache holds the current objects and a ring of recent events: at least
// Config.EventWindow events, more while they are younger than
// Config.EventFreshness, never more than Config.MaxEventWindow.
// States of custom resources that are no longer their key's current state
// and are more than 1,024 events deep in the ring are kept packed (an
// exact private encoding, as a delta against an older state of the key)
// and unpacked for the watchers that read them (see packedObj).
//
// # Object ownership
//
// Objects in watch events are shared by every watcher and by the cache:
// receivers must not modify them (copy first). Objects returned by Get and
// GetList are deep copies owned by the caller.
package cacher
