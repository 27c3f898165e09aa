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
//   - GetList with resourceVersion "0" (any state; Limit is ignored and the
//     whole list is returned, as kube's watch cache does), "N" with match
//     NotOlderThan (or no match and no limit), and consistent lists (""
//     without a limit) once the cache has caught up with the underlying
//     store's CurrentRevision.
//   - Get with resourceVersion "0", or "N" once the cache has reached N.
//
// Everything else goes to the underlying store: writes (the cache learns of
// them through its watch), Get with "", Exact lists, lists with a continue
// token, consistent lists with a limit (pagination keeps the underlying
// store's snapshots and continue tokens; the cache does not keep snapshots),
// and any read the cache cannot answer in time (not initialized yet, or not
// caught up within Config.ConsistentReadWait).
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
// # Fan-out and memory
//
// Each watcher has a bounded buffer; a watcher whose buffer is full when an
// event arrives is terminated (its result channel closes) instead of
// stalling the others, and its client resumes from its last revision. The
// cache holds the current objects and a ring of recent events: at least
// Config.EventWindow events, more while they are younger than
// Config.EventFreshness, never more than Config.MaxEventWindow.
//
// # Object ownership
//
// Objects in watch events are shared by every watcher and by the cache:
// receivers must not modify them (copy first). Objects returned by Get and
// GetList are deep copies owned by the caller.
package cacher
