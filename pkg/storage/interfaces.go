package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is the storage contract every resource is stored through.
//
// Keys are paths such as "/configmaps/default/foo"; a backend may prepend its
// own prefix (etcd3 prepends --etcd-prefix). Semantics are etcd's:
//   - one global, monotonically increasing revision per backend;
//   - an object's metadata.resourceVersion is the revision that last wrote it
//     (set by the backend on every object it returns);
//   - a list's resourceVersion is the revision it was read at;
//   - a watch from revision N delivers every change after N, in order, once;
//   - a revision older than the compacted one is an [ErrCodeExpired] error.
//
// All methods are safe for concurrent use. Errors are *[StorageError] (test with
// the Is* helpers) or context errors. Malformed options (a resourceVersion
// that is not a revision, an unknown resourceVersionMatch, a resourceVersion
// together with a continue token) are ErrCodeInvalidArgument; a malformed
// continue token is ErrCodeInvalidContinue.
//
// A backend may also implement RequestWatchProgress(ctx) error (the
// cacher's ProgressRequester): it makes the backend send, soon, a progress
// BOOKMARK carrying its current revision to its watches that asked for
// ProgressNotify with Predicate.AllowWatchBookmarks.
type Interface interface {
	// Create stores obj at key if nothing is there. On success out (if non-nil)
	// is set to the stored object, with its resourceVersion. obj must not have
	// a resourceVersion set. Fails with ErrCodeKeyExists if key exists.
	Create(ctx context.Context, key string, obj, out runtime.Object) error

	// Delete removes the object at key. preconditions (UID, resourceVersion)
	// and validateDeletion (called with the current object) are checked against
	// the latest stored object; a conflict with a newer object retries them.
	// cachedExistingObject, if non-nil, is a guess of the current object used
	// to avoid a read. out is set to the deleted object as it was last
	// stored, except its resourceVersion, which is the revision of the
	// delete (as kube's etcd3 store, and as the DELETED watch event carries).
	// Fails with ErrCodeKeyNotFound if nothing is at key.
	Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
		validateDeletion ValidateObjectFunc, cachedExistingObject runtime.Object) error

	// Watch starts a watch on key (or, with opts.Recursive, every key under
	// the prefix key). See ListOptions for resourceVersion semantics:
	//   - ""  : synthetic ADDED events for the current state, then changes;
	//   - "0" : like "" (a cache may start from any state it holds);
	//   - "N" : every change after revision N.
	// A start revision that is compacted (older than the backend's, or the
	// cache's, history) is reported in one of two ways, and callers must
	// handle both: Watch fails with ErrCodeExpired (memory, cacher), or Watch
	// succeeds and the watch delivers one watch.Error event whose object is
	// a *metav1.Status with Code 410 (reason Expired) and then closes its
	// result channel (etcd3, which learns of the compaction from etcd). Other
	// failures of a running watch also end it with one watch.Error event
	// (a 500 *metav1.Status) and a close.
	// With opts.SendInitialEvents=true the initial state is sent as ADDED
	// events; the BOOKMARK annotated "k8s.io/initial-events-end" that ends
	// them is sent only when opts.Predicate.AllowWatchBookmarks is set too
	// (as kube). Periodic progress BOOKMARKs need both opts.ProgressNotify
	// and Predicate.AllowWatchBookmarks.
	// Events whose objects move in or out of opts.Predicate are delivered as
	// ADDED / DELETED (the DELETED object is the old state carrying the
	// event's revision). The watch ends when ctx is cancelled or Stop is
	// called.
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)

	// Get reads the object at key into objPtr. With opts.IgnoreNotFound a
	// missing key leaves objPtr zero-valued and returns nil.
	Get(ctx context.Context, key string, opts GetOptions, objPtr runtime.Object) error

	// GetList reads the objects at key (or under the prefix key when
	// opts.Recursive) matching opts.Predicate into listObj (a *List type whose
	// Items are filled). It sets the list's resourceVersion, and continue /
	// remainingItemCount when opts.Predicate.Limit cuts the list short.
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error

	// GuaranteedUpdate reads the object at key, calls tryUpdate with it, and
	// writes the result if the object has not changed meanwhile; on a
	// conflict it re-reads and calls tryUpdate again, until tryUpdate fails or
	// the write succeeds. destination receives the stored result. If the key
	// does not exist, tryUpdate gets a zero object when ignoreNotFound is true;
	// otherwise ErrCodeKeyNotFound is returned. If tryUpdate returns an object
	// equal (byte-for-byte encoded) to the current one, nothing is written and
	// destination is the current object. cachedExistingObject, if non-nil, is
	// tried first in place of a read.
	GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc, cachedExistingObject runtime.Object) error

	// CurrentRevision returns the backend's current global revision (the
	// revision a consistent read made now would be at).
	CurrentRevision(ctx context.Context) (uint64, error)
}

// ItemGetter is a storage that can serve a single-object read whose
// context asks for a cacheable.Item (a watch cache: see
// cacheable.WithItem) without being given the object to fill: GetItem
// reads key as Get does, hands the object to the Item when it can, and
// otherwise fills an object it makes with newObj. It returns that object,
// or nil when the Item holds the result. A GET served from the cache then
// makes no empty object that nobody reads.
type ItemGetter interface {
	GetItem(ctx context.Context, key string, opts GetOptions, newObj func() runtime.Object) (runtime.Object, error)
}

// UpdateFunc computes the new object from the current one. It may be called
// several times (once per conflict) and must not keep input.
type UpdateFunc func(input runtime.Object) (output runtime.Object, err error)

// ValidateObjectFunc checks an object before a write or delete is committed.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// AttrFunc returns the labels and fields of an object used to match a
// predicate. Fields hold at least metadata.name and metadata.namespace.
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// GetOptions are the options of [Interface.Get].
type GetOptions struct {
	// IgnoreNotFound makes a missing key a success with a zero object.
	IgnoreNotFound bool
	// ResourceVersion: "" reads the latest state; "0" lets a cache answer
	// with any state it has; "N" reads a state at least as new as N (a
	// revision newer than the current one is ErrCodeTooLargeResourceVersion
	// after a short wait).
	ResourceVersion string
}

// ListOptions are the options of [Interface.GetList] and [Interface.Watch].
type ListOptions struct {
	// ResourceVersion and ResourceVersionMatch as in kube's ListOptions:
	//   list, RV ""          : consistent (most recent) read;
	//   list, RV "0"         : any state (a cache answers from memory);
	//   list, RV "N", match "" or NotOlderThan: a state at least as new as N;
	//   list, RV "N", match Exact: exactly revision N (ErrCodeExpired if
	//                          compacted).
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Predicate filters objects (and carries Limit and Continue for lists).
	Predicate SelectionPredicate
	// Recursive treats key as a prefix: every key under key + "/".
	Recursive bool
	// ProgressNotify asks a watch for periodic BOOKMARK events carrying the
	// current revision (only sent when Predicate.AllowWatchBookmarks).
	ProgressNotify bool
	// SendInitialEvents (watch only): see [Interface.Watch].
	SendInitialEvents *bool
}

// SelectionPredicate selects objects by labels and fields and carries the
// paging parameters of a list.
type SelectionPredicate struct {
	Label    labels.Selector // nil means everything
	Field    fields.Selector // nil means everything
	GetAttrs AttrFunc        // nil means DefaultAttrs
	// Limit > 0 caps the number of items a list returns; Continue resumes a
	// previous list from its continue token.
	Limit    int64
	Continue string
	// AllowWatchBookmarks lets a watch send BOOKMARK events.
	AllowWatchBookmarks bool
}

// Empty reports whether the predicate matches everything.
func (p SelectionPredicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether obj is selected by p.
func (p SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	attrs := p.GetAttrs
	if attrs == nil {
		attrs = DefaultAttrs
	}
	ls, fs, err := attrs(obj)
	if err != nil {
		return false, err
	}
	if p.Label != nil && !p.Label.Matches(ls) {
		return false, nil
	}
	if p.Field != nil && !p.Field.Matches(fs) {
		return false, nil
	}
	return true, nil
}

// Preconditions must hold for an update or delete to proceed.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}
