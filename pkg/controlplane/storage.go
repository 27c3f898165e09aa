package controlplane

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/service"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// The built-in resources are declared in one table per API group (upstream's
// RESTStorageProvider shape: group -> version -> resource -> storage), in the
// storage_<group>.go files. Adding a resource is writing its strategy and
// storage (a NewREST in pkg/controlplane/registry/<resource>) and adding one
// line to its group's table; Install derives the rest from the tables:
//
//   - the routes and discovery of every group-version;
//   - what the namespace controller empties a terminating namespace of:
//     every namespace-scoped resource whose storage a table makes (see
//     [storageBuilder.namespacedContent]);
//   - the field selector labels registered on the scheme (a line's
//     fieldLabels, for its kind in its group-version);
//   - what is destroyed when the server stops.
//
// A line's storage func makes the storage of the resource and of its
// subresources (status, scale, binding, finalize, ...). It may use another
// line's storage ([storageAs]): that line is made first, once. A line that
// serves another line's storage under another group or version (core/v1 and
// events.k8s.io/v1 events; later, several versions of one resource) says so
// with [resourceStorage.shared], e.g. through [viewOf].

// builtinGroups are the tables of the groups the core server serves, in
// the order they are installed (and listed by [Install]).
var builtinGroups = []apiGroup{
	coreGroup,
	discoveryGroup,
	eventsGroup,
	coordinationGroup,
	authenticationGroup,
	authorizationGroup,
	appsGroup,
	batchGroup,
	autoscalingGroup,
	policyGroup,
	networkingGroup,
	storageGroup,
	schedulingGroup,
	nodeGroup,
	flowcontrolGroup,
	admissionRegistrationGroup,
	rbacGroup,
	certificatesGroup,
	resourceGroup,
	storageMigrationGroup,
}

// apiGroup is one API group's table.
type apiGroup struct {
	// name is the group ("" for the core group).
	name string
	// versions are the versions served (several versions may share one
	// storage through [viewOf]).
	versions []apiVersion
}

// apiVersion is one version of a group and the resources it serves.
type apiVersion struct {
	name      string
	resources []apiResource
}

// apiResource is one line of a group's table: a resource (plural name) and
// how its storage is made.
type apiResource struct {
	name    string
	storage storageFunc
	// fieldLabels, if set, converts (or accepts) the field selector labels
	// of the resource's kind in this group-version; it is registered on
	// the scheme the REST handlers convert field selectors with. Nil: the
	// scheme's default (metadata.name and metadata.namespace).
	fieldLabels runtime.FieldLabelConversionFunc
}

// storageFunc makes a line's storage, on b's options and config.
type storageFunc func(b *storageBuilder) (resourceStorage, error)

// resourceStorage is the storage of one resource and its subresources.
type resourceStorage struct {
	// storage serves the resource; it must implement rest.Scoper.
	storage rest.Storage
	// subresources serve "<resource>/<name>" (e.g. "status", "scale",
	// "binding"); they share storage's storage, so only storage is
	// destroyed.
	subresources map[string]rest.Storage
	// shared is set when storage serves objects another line's storage
	// holds (the same objects in another group or version): it releases
	// nothing when destroyed, and the namespace controller empties
	// namespaces through the other line.
	shared bool
}

// storeOf is the storage func of a resource that is a plain generic store
// without subresources (configmaps, secrets, leases, ...).
func storeOf(newREST func(generic.RESTOptions) (*generic.Store, error)) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		st, err := newREST(b.opts)
		if err != nil {
			return resourceStorage{}, err
		}
		return resourceStorage{storage: st}, nil
	}
}

// withConfig is the storage func of a resource whose storage holds no
// data (reviews): it is made from the core server's config.
func withConfig(newREST func(Config) rest.Storage) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		return resourceStorage{storage: newREST(b.config)}, nil
	}
}

// viewOf is the storage func of a resource served from the storage of the
// line of, another group or version of the same objects, through view
// (which converts between the two). The view is [resourceStorage.shared].
func viewOf[T, V rest.Storage](of schema.GroupVersionResource, view func(T) V) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		st, err := storageAs[T](b, of)
		if err != nil {
			return resourceStorage{}, err
		}
		return resourceStorage{storage: view(st), shared: true}, nil
	}
}

// storageBuilder makes the storage of the tables' lines, each once: when
// the line is built, or earlier when another line's storage needs it. It is
// used by one goroutine (Install).
type storageBuilder struct {
	opts   generic.RESTOptions
	config Config
	groups []apiGroup
	lines  map[schema.GroupVersionResource]apiResource

	made   map[schema.GroupVersionResource]resourceStorage
	making map[schema.GroupVersionResource]bool
	// order lists the lines made, in the order they were made.
	order []schema.GroupVersionResource
	// releases free storage made outside the lines (the service
	// allocators', the API server leases'); they run after the lines'
	// storage is destroyed.
	releases []func()
	// allocators are the services' ClusterIP and NodePort allocators,
	// made with the services line (see serviceAllocators).
	allocators *service.Allocators
}

// newStorageBuilder indexes groups' lines; a line declared twice is an
// error.
func newStorageBuilder(opts generic.RESTOptions, c Config, groups []apiGroup) (*storageBuilder, error) {
	b := &storageBuilder{
		opts:   opts,
		config: c,
		groups: groups,
		lines:  map[schema.GroupVersionResource]apiResource{},
		made:   map[schema.GroupVersionResource]resourceStorage{},
		making: map[schema.GroupVersionResource]bool{},
	}
	for _, g := range groups {
		for _, v := range g.versions {
			for _, r := range v.resources {
				gvr := schema.GroupVersionResource{Group: g.name, Version: v.name, Resource: r.name}
				if _, dup := b.lines[gvr]; dup {
					return nil, fmt.Errorf("controlplane: %s is declared twice", gvr)
				}
				if r.storage == nil {
					return nil, fmt.Errorf("controlplane: %s has no storage", gvr)
				}
				b.lines[gvr] = r
			}
		}
	}
	return b, nil
}

// build makes the storage of every line. On error, what was made is still
// b's to destroy.
func (b *storageBuilder) build() error {
	for _, g := range b.groups {
		for _, v := range g.versions {
			for _, r := range v.resources {
				if _, err := b.storage(schema.GroupVersionResource{Group: g.name, Version: v.name, Resource: r.name}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// storage returns the storage of line gvr, making it on first use.
func (b *storageBuilder) storage(gvr schema.GroupVersionResource) (resourceStorage, error) {
	if rs, ok := b.made[gvr]; ok {
		return rs, nil
	}
	line, ok := b.lines[gvr]
	if !ok {
		return resourceStorage{}, fmt.Errorf("controlplane: no table serves %s", gvr)
	}
	if b.making[gvr] {
		return resourceStorage{}, fmt.Errorf("controlplane: the storage of %s depends on itself", gvr)
	}
	b.making[gvr] = true
	defer delete(b.making, gvr)
	rs, err := line.storage(b)
	if err != nil {
		return resourceStorage{}, fmt.Errorf("%s: %w", gvr.GroupResource(), err)
	}
	if rs.storage == nil {
		return resourceStorage{}, fmt.Errorf("%s: no storage made", gvr.GroupResource())
	}
	if _, ok := rs.storage.(rest.Scoper); !ok {
		// Not a Scoper would fail the install; destroy what was made.
		if !rs.shared {
			rs.storage.Destroy()
		}
		return resourceStorage{}, fmt.Errorf("%s: storage %T does not tell its scope (rest.Scoper)", gvr.GroupResource(), rs.storage)
	}
	b.made[gvr] = rs
	b.order = append(b.order, gvr)
	return rs, nil
}

// storageAs returns the storage of line gvr as a T.
func storageAs[T rest.Storage](b *storageBuilder, gvr schema.GroupVersionResource) (T, error) {
	var zero T
	rs, err := b.storage(gvr)
	if err != nil {
		return zero, err
	}
	st, ok := rs.storage.(T)
	if !ok {
		return zero, fmt.Errorf("controlplane: the storage of %s is a %T, not a %T", gvr, rs.storage, zero)
	}
	return st, nil
}

// subresourceAs returns subresource sub of line gvr as a T.
func subresourceAs[T rest.Storage](b *storageBuilder, gvr schema.GroupVersionResource, sub string) (T, error) {
	var zero T
	rs, err := b.storage(gvr)
	if err != nil {
		return zero, err
	}
	st, ok := rs.subresources[sub].(T)
	if !ok {
		return zero, fmt.Errorf("controlplane: the storage of %s/%s is a %T, not a %T", gvr, sub, rs.subresources[sub], zero)
	}
	return st, nil
}

// newStorage makes storage outside the lines; b releases it after theirs.
func (b *storageBuilder) newStorage(cfg generic.StorageConfig) (storage.Interface, error) {
	st, release, err := b.opts.NewStorage(cfg)
	if err != nil {
		return nil, err
	}
	if release != nil {
		b.releases = append(b.releases, release)
	}
	return st, nil
}

// destroy releases every storage b made: the lines' (shared ones own
// nothing), then the rest.
func (b *storageBuilder) destroy() {
	for _, gvr := range b.order {
		if rs := b.made[gvr]; !rs.shared {
			rs.storage.Destroy()
		}
	}
	for _, release := range b.releases {
		release()
	}
}

// groupVersionStorage is the installer's map of the lines of one
// group-version: "<resource>" and "<resource>/<subresource>" to storage.
func (b *storageBuilder) groupVersionStorage(group string, v apiVersion) (map[string]rest.Storage, error) {
	out := make(map[string]rest.Storage, len(v.resources))
	for _, r := range v.resources {
		rs, err := b.storage(schema.GroupVersionResource{Group: group, Version: v.name, Resource: r.name})
		if err != nil {
			return nil, err
		}
		out[r.name] = rs.storage
		for sub, st := range rs.subresources {
			out[r.name+"/"+sub] = st
		}
	}
	return out, nil
}

// namespacedContent is what the namespace controller empties a terminating
// namespace of, derived from the lines made: every namespace-scoped
// resource whose storage a line makes (not shared) and lists. Those with
// a collection delete are emptied with it; the others (services, as
// upstream) one object at a time.
func (b *storageBuilder) namespacedContent() map[schema.GroupResource]namespaceContent {
	out := map[schema.GroupResource]namespaceContent{}
	for _, gvr := range b.order {
		rs := b.made[gvr]
		if rs.shared || !rs.storage.(rest.Scoper).NamespaceScoped() {
			continue
		}
		gr := gvr.GroupResource()
		if _, seen := out[gr]; seen {
			continue
		}
		switch st := rs.storage.(type) {
		case namespaceContent:
			out[gr] = st
		case rest.Lister:
			if deleter, ok := st.(rest.GracefulDeleter); ok {
				out[gr] = oneByOne{lister: st, deleter: deleter}
			}
		}
	}
	return out
}

// fieldLabelConversion is a line's field label conversion for its kind.
type fieldLabelConversion struct {
	kind    schema.GroupVersionKind
	convert runtime.FieldLabelConversionFunc
}

// fieldLabelConversions returns the field label conversions of the lines
// made: each line's, for the kind of its storage's objects in its
// group-version.
func (b *storageBuilder) fieldLabelConversions() ([]fieldLabelConversion, error) {
	var out []fieldLabelConversion
	for _, gvr := range b.order {
		line := b.lines[gvr]
		if line.fieldLabels == nil {
			continue
		}
		kinds, _, err := scheme.Scheme.ObjectKinds(b.made[gvr].storage.New())
		if err != nil {
			return nil, fmt.Errorf("kind of %s: %w", gvr, err)
		}
		out = append(out, fieldLabelConversion{
			kind:    gvr.GroupVersion().WithKind(kinds[0].Kind),
			convert: line.fieldLabels,
		})
	}
	return out, nil
}

// schemeRegistration guards the shared scheme's field label conversions
// and Event conversions: registered once per process, by the first Install
// whose storage was all made (every Install has the same tables), and
// before any handler of the process reads them.
var schemeRegistration struct {
	sync.Mutex
	done bool
}

// registerScheme teaches the shared scheme, once per process, the field
// selector labels of the tables' kinds and the conversion between the two
// Event types.
func registerScheme(conversions []fieldLabelConversion) error {
	schemeRegistration.Lock()
	defer schemeRegistration.Unlock()
	if schemeRegistration.done {
		return nil
	}
	for _, c := range conversions {
		if err := scheme.Scheme.AddFieldLabelConversionFunc(c.kind, c.convert); err != nil {
			return fmt.Errorf("scheme: field labels of %s: %w", c.kind, err)
		}
	}
	if err := addEventConversions(scheme.Scheme); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	schemeRegistration.done = true
	return nil
}
