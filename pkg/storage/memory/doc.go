// Package memory is the in-process, ephemeral [storage.Interface] backend
// (--storage-backend=memory): etcd's semantics without etcd, for tests and
// throwaway servers.
//
// A [Backend] is a small multi-version key-value store with one global
// revision, a history of every revision back to the last compaction, and an
// event log that watches read from. Objects are stored encoded with the
// resource's codec (as etcd stores them), so callers never share pointers
// with storage: every read decodes. A [Store] is the storage.Interface of
// one resource on a Backend; all Stores of a Backend share its revision.
//
// Compaction works as etcd's: after [Backend.Compact](rev) the state at any
// revision < rev is gone (Exact lists and continue tokens that need it answer
// ErrCodeExpired / ErrCodeContinueExpired), events at rev and later remain
// (a watch from rev-1 still works).
//
// Watchers never block writers: each watcher has a bounded buffer of pending
// events; a watcher that falls further behind than that is terminated (its
// result channel closes) and its client re-watches or relists.
//
// [Store.RequestWatchProgress] (the cacher's ProgressRequester) sends the
// progress BOOKMARK of every watch that asked for one now rather than at the
// next BookmarkInterval, so a watch cache catches up with writes to other
// resources at once.
package memory
