package generic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// OptimisticLockErrorMsg is kube's message for an update whose
// resourceVersion is not the stored one.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// DefaultDeleteCollectionPageSize is how many objects DeleteCollection lists
// per page when the request sets no limit (kube's value).
const DefaultDeleteCollectionPageSize = 10000

// Store is the generic storage of one resource. Fill in the fields, call
// [Store.Complete], then use it (concurrently). A Store may be copied
// before use (e.g. [NewStatusREST] copies one with another strategy).
type Store struct {
	// NewFunc returns an empty object of the resource; NewListFunc an
	// empty list. Required.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object

	// DefaultQualifiedResource is the resource served (e.g. {"",
	// "configmaps"}); errors name the request's resource when the context
	// carries a RequestInfo, this one otherwise. Required.
	DefaultQualifiedResource schema.GroupResource
	// SingularQualifiedResource is the singular name, for discovery.
	SingularQualifiedResource schema.GroupResource
	// ResourceShortNames and ResourceCategories are shown in discovery.
	ResourceShortNames []string
	ResourceCategories []string

	// StorageVersion is the group-version objects are stored as (set by
	// [NewStore]); discovery publishes its hash (storageVersionHash). Empty:
	// none published.
	StorageVersion schema.GroupVersion
	// KeyPrefix is where objects are stored (see [DefaultResourcePrefix],
	// the default). Used by the default KeyRootFunc and KeyFunc.
	KeyPrefix string
	// KeyRootFunc returns the key of the collection in the request's scope
	// (its namespace, if any); KeyFunc the key of one object. Default:
	// [NamespaceKeyRootFunc] / [NamespaceKeyFunc] for namespaced resources,
	// KeyPrefix / [NoNamespaceKeyFunc] otherwise.
	KeyRootFunc func(ctx context.Context) string
	KeyFunc     func(ctx context.Context, name string) (string, error)
	// ObjectNameFunc returns an object's name (default: metadata.name).
	ObjectNameFunc func(obj runtime.Object) (string, error)

	// GetAttrs returns the labels and fields selectors match (default
	// storage.DefaultAttrs: metadata.name and metadata.namespace). It must
	// be the same function the storage's watch cache (if any) uses.
	GetAttrs storage.AttrFunc
	// FieldLabels are the fields, beyond metadata.name and
	// metadata.namespace, that GetAttrs returns and field selectors may
	// use. A selector on another field is 400 BadRequest.
	FieldLabels []string
	// PredicateFunc builds the predicate of a list or watch (default: the
	// selectors with GetAttrs).
	PredicateFunc func(label labels.Selector, field fields.Selector) storage.SelectionPredicate

	// NameValidator validates metadata.name (and generateName as a prefix).
	// Default validation.NameIsDNSSubdomain; see [ValidatePathSegmentName]
	// for resources whose names only need to be path segments.
	NameValidator validation.ValidateNameFunc
	// NameDeclarative, when set, returns the errors of a beta declarative
	// rule upstream has on metadata.name (+k8s:subfield(name)=+k8s:format=...),
	// marked covered and beta: on create they replace NameValidator's
	// errors on the name (not its "Required value") and come after the
	// others (see orderDeclarative), and generateName is not checked
	// (upstream's ValidateObjectMetaWithOpts). NameValidator must accept the
	// same names.
	NameDeclarative func(fldPath *field.Path, name string) field.ErrorList
	// GenerateNameFunc returns a name for generateName base (default
	// [SimpleNameGenerator]).
	GenerateNameFunc func(base string) string

	// CreateStrategy and UpdateStrategy are required (CreateStrategy may be
	// nil for resources that cannot be created); DeleteStrategy is
	// optional (nil: no graceful deletion).
	CreateStrategy CreateStrategy
	UpdateStrategy UpdateStrategy
	DeleteStrategy DeleteStrategy
	// ResetFieldsStrategy gives the fields server-side apply must not let
	// this (sub)resource change. Default: the UpdateStrategy, if it
	// implements rest.ResetFieldsStrategy.
	ResetFieldsStrategy rest.ResetFieldsStrategy
	// TableConvertor renders Tables (default [NewDefaultTableConvertor]).
	TableConvertor rest.TableConvertor
	// CheckConversion, when set, returns the error kube-apiserver's
	// conversion of an object of this resource to its internal version
	// would (nil: it converts): the request handlers refuse such bodies
	// and patched objects as upstream's decoding does.
	CheckConversion func(obj runtime.Object) error

	// ReturnDeletedObject makes Delete return the deleted object instead
	// of a Status with status Success (kube does the latter for most
	// resources).
	ReturnDeletedObject bool
	// ShouldDeleteDuringUpdate, if set, must also agree before an update
	// that removes the last finalizer deletes the object.
	ShouldDeleteDuringUpdate func(ctx context.Context, key string, obj, existing runtime.Object) bool
	// DeleteCollectionWorkers is how many deletes DeleteCollection runs in
	// parallel (default 1).
	DeleteCollectionWorkers int

	// Storage holds the objects (possibly a watch cache). Required.
	Storage storage.Interface
	// DestroyFunc releases Storage (e.g. stops its watch cache); called
	// once by Destroy.
	DestroyFunc func()

	// Typer finds the kind of objects for Invalid errors (default
	// scheme.Scheme; unstructured objects carry their own kind).
	Typer runtime.ObjectTyper
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// TTL, in seconds, is the time to live of the objects the store
	// writes (0: none): every create and update is made with
	// storage.WithTTL, as upstream's TTLFunc (Events: --event-ttl), so
	// the etcd3 backend attaches their keys to an etcd lease.
	TTL uint64
}

// Interfaces a Store implements.
var (
	_ rest.Storage                    = (*Store)(nil)
	_ rest.Scoper                     = (*Store)(nil)
	_ rest.Getter                     = (*Store)(nil)
	_ rest.Lister                     = (*Store)(nil)
	_ rest.Watcher                    = (*Store)(nil)
	_ rest.Creater                    = (*Store)(nil)
	_ rest.Updater                    = (*Store)(nil)
	_ rest.Patcher                    = (*Store)(nil)
	_ rest.GracefulDeleter            = (*Store)(nil)
	_ rest.CollectionDeleter          = (*Store)(nil)
	_ rest.MayReturnFullObjectDeleter = (*Store)(nil)
	_ rest.TableConvertor             = (*Store)(nil)
	_ rest.SingularNameProvider       = (*Store)(nil)
	_ rest.ShortNamesProvider         = (*Store)(nil)
	_ rest.CategoriesProvider         = (*Store)(nil)
	_ rest.ResetFieldsStrategy        = (*Store)(nil)
)

// DeleteReturnsDeletedObject reports whether Delete answers with the
// deleted object (ReturnDeletedObject).
func (e *Store) DeleteReturnsDeletedObject() bool { return e.ReturnDeletedObject }

// DefaultResourcePrefix returns the storage prefix of a resource:
// "/<resource>" in the core group, "/<group>/<resource>" otherwise.
func DefaultResourcePrefix(gr schema.GroupResource) string {
	if gr.Group == "" {
		return "/" + gr.Resource
	}
	return "/" + gr.Group + "/" + gr.Resource
}

// Complete checks the required fields and fills in the defaults.
func (e *Store) Complete() error {
	var errs []error
	if e.NewFunc == nil {
		errs = append(errs, errors.New("NewFunc is required"))
	}
	if e.NewListFunc == nil {
		errs = append(errs, errors.New("NewListFunc is required"))
	}
	if e.DefaultQualifiedResource.Empty() {
		errs = append(errs, errors.New("DefaultQualifiedResource is required"))
	}
	if e.UpdateStrategy == nil {
		errs = append(errs, errors.New("UpdateStrategy is required"))
	}
	if e.CreateStrategy != nil && e.UpdateStrategy != nil && e.CreateStrategy.NamespaceScoped() != e.UpdateStrategy.NamespaceScoped() {
		errs = append(errs, errors.New("CreateStrategy and UpdateStrategy disagree on NamespaceScoped"))
	}
	if e.Storage == nil {
		errs = append(errs, errors.New("Storage is required"))
	}
	if (e.KeyFunc == nil) != (e.KeyRootFunc == nil) {
		errs = append(errs, errors.New("KeyFunc and KeyRootFunc must be set together"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store for %s: %w", e.DefaultQualifiedResource, err)
	}
	if e.KeyPrefix == "" {
		e.KeyPrefix = DefaultResourcePrefix(e.DefaultQualifiedResource)
	}
	e.KeyPrefix = strings.TrimSuffix(e.KeyPrefix, "/")
	if e.KeyFunc == nil {
		prefix := e.KeyPrefix
		if e.NamespaceScoped() {
			e.KeyRootFunc = func(ctx context.Context) string { return NamespaceKeyRootFunc(ctx, prefix) }
			e.KeyFunc = func(ctx context.Context, name string) (string, error) { return NamespaceKeyFunc(ctx, prefix, name) }
		} else {
			e.KeyRootFunc = func(context.Context) string { return prefix }
			e.KeyFunc = func(ctx context.Context, name string) (string, error) { return NoNamespaceKeyFunc(ctx, prefix, name) }
		}
	}
	if e.ObjectNameFunc == nil {
		e.ObjectNameFunc = func(obj runtime.Object) (string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", err
			}
			return m.GetName(), nil
		}
	}
	if e.GetAttrs == nil {
		e.GetAttrs = storage.DefaultAttrs
	}
	if e.PredicateFunc == nil {
		attrs := e.GetAttrs
		e.PredicateFunc = func(l labels.Selector, f fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: l, Field: f, GetAttrs: attrs}
		}
	}
	if e.NameValidator == nil {
		e.NameValidator = validation.NameIsDNSSubdomain
	}
	if e.GenerateNameFunc == nil {
		e.GenerateNameFunc = SimpleNameGenerator
	}
	if e.ResetFieldsStrategy == nil {
		if r, ok := e.UpdateStrategy.(rest.ResetFieldsStrategy); ok {
			e.ResetFieldsStrategy = r
		}
	}
	if e.TableConvertor == nil {
		e.TableConvertor = NewDefaultTableConvertor(e.DefaultQualifiedResource)
	}
	if e.DeleteCollectionWorkers < 1 {
		e.DeleteCollectionWorkers = 1
	}
	if e.DestroyFunc != nil {
		e.DestroyFunc = sync.OnceFunc(e.DestroyFunc)
	}
	if e.Typer == nil {
		e.Typer = scheme.Scheme
	}
	if e.Logger == nil {
		e.Logger = slog.Default()
	}
	return nil
}

// NamespaceKeyRootFunc returns prefix, or prefix/<namespace> when the
// context carries a namespace.
func NamespaceKeyRootFunc(ctx context.Context, prefix string) string {
	if ns := request.NamespaceFrom(ctx); ns != "" {
		return prefix + "/" + ns
	}
	return prefix
}

// NamespaceKeyFunc returns prefix/<namespace>/<name>; the namespace (from
// the context) and the name are required and must be path segments (400
// BadRequest otherwise, with kube's messages).
func NamespaceKeyFunc(ctx context.Context, prefix, name string) (string, error) {
	ns := request.NamespaceFrom(ctx)
	if ns == "" {
		return "", apierrors.NewBadRequest("Namespace parameter required.")
	}
	if err := checkKeyName(name); err != nil {
		return "", err
	}
	return prefix + "/" + ns + "/" + name, nil
}

// NoNamespaceKeyFunc returns prefix/<name>.
func NoNamespaceKeyFunc(_ context.Context, prefix, name string) (string, error) {
	if err := checkKeyName(name); err != nil {
		return "", err
	}
	return prefix + "/" + name, nil
}

func checkKeyName(name string) error {
	if name == "" {
		return apierrors.NewBadRequest("Name parameter required.")
	}
	if msgs := path.IsValidPathSegmentName(name); len(msgs) != 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, strings.Join(msgs, ";")))
	}
	return nil
}

// ValidatePathSegmentName is a NameValidator for resources whose names
// only need to be usable as a path segment (e.g. RBAC's).
func ValidatePathSegmentName(name string, prefix bool) []string {
	return path.ValidatePathSegmentName(name, prefix)
}

// New implements rest.Storage.
func (e *Store) New() runtime.Object { return e.NewFunc() }

// ConversionCheck returns CheckConversion (nil when unset), for the
// request handlers.
func (e *Store) ConversionCheck() func(runtime.Object) error { return e.CheckConversion }

// NewList implements rest.Lister.
func (e *Store) NewList() runtime.Object { return e.NewListFunc() }

// Destroy implements rest.Storage: it calls DestroyFunc once.
func (e *Store) Destroy() {
	if e.DestroyFunc != nil {
		e.DestroyFunc()
	}
}

// NamespaceScoped implements rest.Scoper.
func (e *Store) NamespaceScoped() bool {
	if e.CreateStrategy != nil {
		return e.CreateStrategy.NamespaceScoped()
	}
	return e.UpdateStrategy.NamespaceScoped()
}

// GetSingularName implements rest.SingularNameProvider.
func (e *Store) GetSingularName() string { return e.SingularQualifiedResource.Resource }

// ShortNames implements rest.ShortNamesProvider.
func (e *Store) ShortNames() []string { return e.ResourceShortNames }

// Categories implements rest.CategoriesProvider.
func (e *Store) Categories() []string { return e.ResourceCategories }

// GetResetFields implements rest.ResetFieldsStrategy.
func (e *Store) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if e.ResetFieldsStrategy == nil {
		return nil
	}
	return e.ResetFieldsStrategy.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (e *Store) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return e.TableConvertor.ConvertToTable(ctx, object, tableOptions)
}

// Get implements rest.Getter.
func (e *Store) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	var opts storage.GetOptions
	if options != nil {
		opts.ResourceVersion = options.ResourceVersion
	}
	if ig, ok := e.Storage.(storage.ItemGetter); ok && cacheable.ItemWanted(ctx) != nil {
		// The object is made only if the storage does not hand its
		// entry to the reader's Item (then it is nil: the reader
		// writes the Item, see rest.SharedObjectGetter).
		obj, err := ig.GetItem(ctx, key, opts, e.NewFunc)
		if err != nil {
			return nil, interpret(err, e.qualifiedResource(ctx), name, "get")
		}
		return obj, nil
	}
	obj := e.NewFunc()
	if err := e.Storage.Get(ctx, key, opts, obj); err != nil {
		return nil, interpret(err, e.qualifiedResource(ctx), name, "get")
	}
	return obj, nil
}

// qualifiedResource is the resource of the request (a Store may serve
// several, e.g. events in two groups), or DefaultQualifiedResource.
func (e *Store) qualifiedResource(ctx context.Context) schema.GroupResource {
	if info, ok := request.RequestInfoFrom(ctx); ok && info.IsResourceRequest && info.Resource != "" {
		return schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
	}
	return e.DefaultQualifiedResource
}

// objectKind returns the kind of obj for Invalid errors.
func (e *Store) objectKind(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		if gvk := u.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			return gvk, nil
		}
	}
	kinds, _, err := e.Typer.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, apierrors.NewInternalError(err)
	}
	return kinds[0], nil
}

// isDryRun reports whether options ask for a dry run (kube treats any
// value as a dry run; the handler has validated it is "All").
func isDryRun(dryRun []string) bool { return len(dryRun) > 0 }

// StorageGroupVersion is the group-version objects are stored as, for
// discovery's storageVersionHash (empty when unknown).
func (e *Store) StorageGroupVersion() schema.GroupVersion { return e.StorageVersion }
