package rest

import (
	"context"
	"net/http"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Storage is what every resource (or subresource) storage implements.
type Storage interface {
	// New returns an empty object of the kind served.
	New() runtime.Object
	// Destroy releases the storage's resources (watch caches, goroutines).
	// Idempotent.
	Destroy()
}

// Scoper tells whether a resource lives in namespaces.
type Scoper interface {
	NamespaceScoped() bool
}

// SingularNameProvider gives the singular name shown in discovery.
type SingularNameProvider interface {
	GetSingularName() string
}

// ShortNamesProvider gives the short names shown in discovery.
type ShortNamesProvider interface {
	ShortNames() []string
}

// CategoriesProvider gives the categories (e.g. "all") shown in discovery.
type CategoriesProvider interface {
	Categories() []string
}

// GroupVersionKindProvider overrides the kind of a storage served in a
// group-version other than its object's (e.g. the scale subresource).
type GroupVersionKindProvider interface {
	GroupVersionKind(containingGV schema.GroupVersion) schema.GroupVersionKind
}

// Getter reads one object by name (namespace from the context).
type Getter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
}

// TableConvertor turns objects or lists into a meta.k8s.io/v1 Table.
type TableConvertor interface {
	// ConvertToTable converts object (an item or a list) to rows.
	// tableOptions is a *metav1.TableOptions or nil.
	ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error)
}

// Lister lists objects.
type Lister interface {
	// NewList returns an empty list of the kind served.
	NewList() runtime.Object
	// List returns the objects selected by options.
	List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error)
	TableConvertor
}

// Watcher watches objects.
type Watcher interface {
	// Watch starts a watch; options carry selectors, resourceVersion,
	// allowWatchBookmarks and sendInitialEvents.
	Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error)
}

// ValidateObjectFunc is an admission-style check run on an object before
// it is written.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// ValidateObjectUpdateFunc is ValidateObjectFunc for updates.
type ValidateObjectUpdateFunc func(ctx context.Context, obj, old runtime.Object) error

// updateObjectsReadKey is the context key of WithUpdateObjectsRead.
type updateObjectsReadKey struct{}

// WithUpdateObjectsRead returns ctx carrying reads, which tells the
// storage of an update whether the ValidateObjectUpdateFunc passed with it
// may read the objects it is given (whether a validating admission plugin
// looks at them). The store validates with copies of the new and the
// current object, so that no validator can change or keep the objects it
// writes and caches; when reads answers false, right before the
// validation, it passes its own. Only the handler that builds that
// validation sets it, for the one Update call it makes.
func WithUpdateObjectsRead(ctx context.Context, reads func() bool) context.Context {
	return context.WithValue(ctx, updateObjectsReadKey{}, reads)
}

// UpdateObjectsRead reports whether the update validation of ctx may read
// its objects: true unless ctx carries WithUpdateObjectsRead answering
// false now.
func UpdateObjectsRead(ctx context.Context) bool {
	reads, ok := ctx.Value(updateObjectsReadKey{}).(func() bool)
	return !ok || reads()
}

// timestampComparisonsKey is the context key of WithTimestampComparisons.
type timestampComparisonsKey struct{}

// WithTimestampComparisons returns ctx carrying record, which the storage
// of an update calls with the outcome and duration of its comparison of
// the new object's managed fields timestamps with the stored object's
// (apiserver_request_timestamp_comparison_time). Set by the handlers of
// updates and patches.
func WithTimestampComparisons(ctx context.Context, record func(outcome string, d time.Duration)) context.Context {
	return context.WithValue(ctx, timestampComparisonsKey{}, record)
}

// TimestampsCompared calls the recorder of ctx (WithTimestampComparisons),
// if any.
func TimestampsCompared(ctx context.Context, outcome string, d time.Duration) {
	if record, ok := ctx.Value(timestampComparisonsKey{}).(func(string, time.Duration)); ok {
		record(outcome, d)
	}
}

// duplicateValidationErrorsKey is the context key of
// WithDuplicateValidationErrors.
type duplicateValidationErrorsKey struct{}

// WithDuplicateValidationErrors returns ctx carrying record, which the
// storage of an update refused as invalid calls with the number of its
// errors that repeat an earlier one word for word
// (apiserver_validation_duplicate_validation_error_total). Set by the
// handlers of updates and patches.
func WithDuplicateValidationErrors(ctx context.Context, record func(n int)) context.Context {
	return context.WithValue(ctx, duplicateValidationErrorsKey{}, record)
}

// DuplicateValidationErrors calls the recorder of ctx
// (WithDuplicateValidationErrors), if any.
func DuplicateValidationErrors(ctx context.Context, n int) {
	if record, ok := ctx.Value(duplicateValidationErrorsKey{}).(func(int)); ok {
		record(n)
	}
}

// ValidateAllObjectFunc accepts everything.
func ValidateAllObjectFunc(context.Context, runtime.Object) error { return nil }

// ValidateAllObjectUpdateFunc accepts everything.
func ValidateAllObjectUpdateFunc(context.Context, runtime.Object, runtime.Object) error { return nil }

// Creater creates objects.
type Creater interface {
	New() runtime.Object
	// Create stores obj (dry-run when options.DryRun is ["All"]) and
	// returns what was stored.
	Create(ctx context.Context, obj runtime.Object, createValidation ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error)
}

// SharedObjectWatcher is a storage whose watches may hand the same event
// object to every watcher, to be encoded once (cacheable.Objects): its
// WatchSharesObjects(w) is true when w, the storage as installed, passes
// its events' objects through unchanged.
type SharedObjectWatcher interface {
	WatchSharesObjects(w Watcher) bool
}

// SharedObjectLister is a storage whose lists may hand their items to the
// API handler as shared objects, encoded once and kept with the watch
// cache's entries (cacheable.WithItems): its ListSharesObjects(l) is true
// when l, the storage as installed, returns the list its storage read
// filled, unchanged.
type SharedObjectLister interface {
	ListSharesObjects(l Lister) bool
}

// SharedObjectGetter is a storage whose single-object reads may hand the
// watch cache's entry to the API handler as a shared object, encoded once
// and kept with the entry (cacheable.WithItem): its GetSharesObjects(g) is
// true when g, the storage as installed, returns the object its storage
// read filled, unchanged. When the read hands the entry to the Item, the
// object g returns may be nil (the generic store then makes none).
type SharedObjectGetter interface {
	GetSharesObjects(g Getter) bool
}

// GroupVersionAcceptor is a storage that takes request bodies in other
// group-versions than the one it is served in (converted by the scheme).
type GroupVersionAcceptor interface {
	AcceptsGroupVersion(gv schema.GroupVersion) bool
}

// UpdatedObjectInfo computes the new object of an update from the current
// one (a PUT body, or a patch applied to the current object).
type UpdatedObjectInfo interface {
	// Preconditions the current object must meet (may be nil).
	Preconditions() *metav1.Preconditions
	// UpdatedObject returns the new object given the current one (nil if
	// it does not exist). It may be called more than once (on conflicts).
	UpdatedObject(ctx context.Context, oldObj runtime.Object) (newObj runtime.Object, err error)
}

// Updater replaces objects.
type Updater interface {
	New() runtime.Object
	// Update writes the object computed by objInfo; it reports whether the
	// object was created (PUT of a missing object where allowed).
	Update(ctx context.Context, name string, objInfo UpdatedObjectInfo, createValidation ValidateObjectFunc,
		updateValidation ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error)
}

// Patcher can be patched: the handler reads, patches and updates.
type Patcher interface {
	Getter
	Updater
}

// GracefulDeleter deletes objects, possibly gracefully (finalizers,
// grace periods): it reports whether the object is gone now (true) or
// only marked for deletion (false).
type GracefulDeleter interface {
	Delete(ctx context.Context, name string, deleteValidation ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error)
}

// MayReturnFullObjectDeleter is a GracefulDeleter that says whether its
// Delete answers with the deleted object rather than a Status; the
// OpenAPI documents name that as the DELETE response.
type MayReturnFullObjectDeleter interface {
	DeleteReturnsDeletedObject() bool
}

// CollectionDeleter deletes every object selected by listOptions.
type CollectionDeleter interface {
	DeleteCollection(ctx context.Context, deleteValidation ValidateObjectFunc, options *metav1.DeleteOptions,
		listOptions *metainternalversion.ListOptions) (runtime.Object, error)
}

// ResetFieldsStrategy tells server-side apply which fields a (sub)resource
// must not change, per API version (e.g. status for the main resource,
// everything but status for /status).
type ResetFieldsStrategy interface {
	GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set
}

// Connecter serves a subresource that is a connection rather than an
// object (upstream's rest.Connecter: pods/log, pods/exec, pods/proxy,
// nodes/proxy, ...). The installer routes the methods it lists to it (and
// the paths below it for a SubpathConnecter); the verbs in discovery
// follow from them (GET get, POST create, PUT update, PATCH patch, DELETE
// delete).
type Connecter interface {
	Storage
	// ConnectMethods are the HTTP methods served.
	ConnectMethods() []string
	// Connect returns the handler answering req for the named object (the
	// namespace is the context's); an error is answered as its API status.
	// The handler answers its own errors with fail.
	Connect(ctx context.Context, name string, req *http.Request, fail ErrorWriter) (http.Handler, error)
}

// SubpathConnecter is a Connecter that also serves the paths below it
// (pods/{name}/proxy/{path}).
type SubpathConnecter interface {
	Connecter
	// ConnectSubpath reports whether paths below the subresource are
	// served.
	ConnectSubpath() bool
}

// GetOptionsConnecter is a Connecter that upstream serves as a getter
// with options (its rest.GetterWithOptions: pods/log). The OpenAPI
// documents describe its GET as a read whose query parameters are the
// fields of the options object NewGetOptions returns.
type GetOptionsConnecter interface {
	Connecter
	NewGetOptions() runtime.Object
}

// StorageMetadata is what a storage answers besides its kind, as
// upstream's rest.StorageMetadata tells the OpenAPI documents.
type StorageMetadata interface {
	// ProducesMIMETypes are the media types verb answers in besides the
	// usual ones (pods/log: text/plain).
	ProducesMIMETypes(verb string) []string
	// ProducesObject is what verb answers with instead of the storage's
	// kind, nil for the kind; only its type matters (pods/log: "", a
	// string).
	ProducesObject(verb string) any
}

// ErrorWriter answers a request with an error, as its API status in the
// media type the request accepts.
type ErrorWriter func(w http.ResponseWriter, req *http.Request, err error)

// CorruptObjectDeleter deletes an object that cannot be read from storage
// (kube-apiserver's unsafe deletion: DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential, upstream's
// rest.CorruptObjectDeleterProvider). The object is deleted only if it
// cannot be decoded, with no precondition, admission or finalizer; a
// dry run deletes nothing. It reports whether the object is gone.
type CorruptObjectDeleter interface {
	DeleteCorrupt(ctx context.Context, name string, options *metav1.DeleteOptions) (runtime.Object, bool, error)
	// DeletesCorruptObjects reports whether the resource offers it: false
	// where upstream's storage provides no corrupt-object deleter (its
	// RBAC policy-based storages), whose requests are a 500.
	DeletesCorruptObjects() bool
}
