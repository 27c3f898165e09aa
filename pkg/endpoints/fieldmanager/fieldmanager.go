package fieldmanager

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// sharedTypeConverter is built on first use and read-only afterwards.
var sharedTypeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	tc, err := openapi.Default().TypeConverter()
	if err != nil {
		return nil, fmt.Errorf("type converter of the built-in kinds: %w", err)
	}
	return tc, nil
})

// TypeConverter returns the process-wide TypeConverter of every built-in
// kind (list-map keys and merge strategies from the OpenAPI extensions).
// The first call builds it; later calls return the same value, or the same
// error. It is safe for concurrent use.
func TypeConverter() (managedfields.TypeConverter, error) {
	return sharedTypeConverter()
}

// Config describes the field manager of one (sub)resource.
type Config struct {
	// Kind is the kind the (sub)resource is served as; its group-version
	// is also the hub version. Required.
	Kind schema.GroupVersionKind
	// Subresource is "" for the main resource, "status" etc. otherwise.
	Subresource string
	// ResetFields are the fields, per API version, that the storage's
	// strategy resets on writes through this (sub)resource (status on
	// the main resource, spec on /status): they are never owned by a
	// manager of this (sub)resource. Nil means none.
	ResetFields map[fieldpath.APIVersion]*fieldpath.Set

	// TypeConverter defaults to [TypeConverter].
	TypeConverter managedfields.TypeConverter
	// Scheme converts, defaults and creates objects of Kind; it defaults
	// to pkg/api/scheme.Scheme. Convertor, Defaulter and Creater, when
	// set, take its place in their role.
	Scheme *runtime.Scheme
	// Convertor converts objects of Kind between versions (custom
	// resources: *unstructured.Unstructured).
	Convertor runtime.ObjectConvertor
	// Defaulter defaults objects of Kind.
	Defaulter runtime.ObjectDefaulter
	// Creater creates empty objects of Kind.
	Creater runtime.ObjectCreater
	// CustomResource selects upstream's field manager for custom
	// resources: managed fields of every version are converted through
	// Kind's group-version (there is no internal version), and objects
	// are unstructured.
	CustomResource bool
	// ReadConvertor, when set, takes Convertor's place in updates (not
	// in applies): the field manager of an update converts the new and
	// the live object to Kind's version only to read them (their typed
	// values are compared), so it may return an object already in that
	// version unchanged instead of a copy. An apply merges the converted
	// live object into its result and defaults it, so it keeps
	// Convertor's copies.
	ReadConvertor runtime.ObjectConvertor
}

// Manager is the field manager of one (sub)resource. It implements
// handlers.FieldManager and is safe for concurrent use.
type Manager struct {
	// managers returns the upstream field managers, built on first use:
	// a server builds one Manager per (sub)resource it serves (~150 on
	// the built-in kinds), most of them not written before it is ready
	// or at all, and building upstream's chain of managers (and its
	// field sets) costs ~5 µs and 65 allocations each (BenchmarkBuild):
	// ~1 ms of every start.
	managers  func() upstreamManagers
	tc        managedfields.TypeConverter
	convertor runtime.ObjectConvertor
	gv        schema.GroupVersion

	// kind, subresource and sharedSchema are UpdateRepeatedCreate's:
	// sharedSchema is set for the built-in kinds on the process-wide
	// TypeConverter and scheme.
	kind         schema.GroupVersionKind
	subresource  string
	resetKey     func() string
	sharedSchema bool
	// directFields: update is built to take unstructured objects as
	// directFields.
	directFields bool
}

var _ handlers.FieldManager = (*Manager)(nil)

// upstreamManagers are a Manager's field managers.
type upstreamManagers struct {
	fm *managedfields.FieldManager
	// update is fm's twin on Config.ReadConvertor, for updates; fm
	// when there is none.
	update *managedfields.FieldManager
	// cr does the updates of custom resources it can (see crUpdater),
	// update the rest; nil for built-in kinds.
	cr *crUpdater
}

// New builds the field manager c describes.
func New(c Config) (*Manager, error) {
	if c.Kind.Version == "" || c.Kind.Kind == "" {
		return nil, fmt.Errorf("field manager: incomplete kind %q", c.Kind)
	}
	tc := c.TypeConverter
	if tc == nil {
		var err error
		if tc, err = TypeConverter(); err != nil {
			return nil, err
		}
	}
	s := c.Scheme
	if s == nil {
		s = scheme.Scheme
	}
	shared := c.TypeConverter == nil && !c.CustomResource && s == scheme.Scheme &&
		c.Convertor == nil && c.Defaulter == nil && c.Creater == nil
	if shared && c.ReadConvertor == nil {
		return sharedManager(c, func() (*Manager, error) { return build(c, tc, s, shared) })
	}
	return build(c, tc, s, shared)
}

// build makes the manager New describes; tc and s are c's with their
// defaults applied, shared tells whether they are the process-wide ones.
func build(c Config, tc managedfields.TypeConverter, s *runtime.Scheme, shared bool) (*Manager, error) {
	var convertor runtime.ObjectConvertor = crossGroupConvertor{s}
	if c.Convertor != nil {
		convertor = c.Convertor
	}
	var defaulter runtime.ObjectDefaulter = s
	if c.Defaulter != nil {
		defaulter = c.Defaulter
	}
	var creater runtime.ObjectCreater = s
	if c.Creater != nil {
		creater = c.Creater
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if len(c.ResetFields) > 0 {
		reset = make(map[fieldpath.APIVersion]fieldpath.Filter, len(c.ResetFields))
		for v, set := range c.ResetFields {
			reset[v] = fieldpath.NewExcludeSetFilter(set)
		}
	}
	newManager := managedfields.NewDefaultFieldManager
	if c.CustomResource {
		newManager = managedfields.NewDefaultCRDFieldManager
	}
	// Upstream's constructors fail only without a type converter: that
	// is checked here, and they are called on first use (see Manager).
	if tc == nil {
		return nil, fmt.Errorf("field manager of %s (subresource %q): no type converter", c.Kind, c.Subresource)
	}
	managers := sync.OnceValue(func() upstreamManagers {
		fail := func(err error) {
			panic(fmt.Sprintf("field manager of %s (subresource %q): %v", c.Kind, c.Subresource, err))
		}
		fm, err := newManager(tc, convertor, defaulter, creater, c.Kind, c.Kind.GroupVersion(), c.Subresource, reset)
		if err != nil {
			fail(err)
		}
		update := fm
		if c.CustomResource {
			// Updates of unstructured objects hand them over as
			// directFields (see UpdateNoErrors).
			readConvertor := convertor
			if c.ReadConvertor != nil {
				readConvertor = c.ReadConvertor
			}
			if update, err = newManager(unwrapTypeConverter{tc}, unwrapConvertor{readConvertor}, defaulter, creater, c.Kind, c.Kind.GroupVersion(), c.Subresource, reset); err != nil {
				fail(err)
			}
			cr := newCRUpdater(tc, readConvertor, c.Kind, c.Subresource, reset)
			return upstreamManagers{fm: fm, update: update, cr: cr}
		} else if c.ReadConvertor != nil {
			if update, err = newManager(tc, c.ReadConvertor, defaulter, creater, c.Kind, c.Kind.GroupVersion(), c.Subresource, reset); err != nil {
				fail(err)
			}
		}
		return upstreamManagers{fm: fm, update: update}
	})
	return &Manager{managers: managers, tc: tc, convertor: convertor, gv: c.Kind.GroupVersion(),
		kind: c.Kind, subresource: c.Subresource, resetKey: sync.OnceValue(func() string { return resetKey(c.ResetFields) }), sharedSchema: shared,
		directFields: c.CustomResource}, nil
}

// resetKey prints reset fields in a stable order, for UpdateRepeatedCreate's key.
func resetKey(reset map[fieldpath.APIVersion]*fieldpath.Set) string {
	if len(reset) == 0 {
		return ""
	}
	var b strings.Builder
	for _, v := range slices.Sorted(maps.Keys(reset)) {
		b.WriteString(string(v))
		b.WriteByte('=')
		if reset[v] != nil {
			b.WriteString(reset[v].String())
		}
		b.WriteByte(';')
	}
	return b.String()
}

// UpdateNoErrors implements handlers.FieldManager: newObj with its
// managedFields updated for a non-apply write by manager (an Update entry
// with the fields that changed). managedFields the request sets itself
// are kept when they decode ([] or [{}] resets them); on internal errors
// the live object's managedFields are kept.
func (m *Manager) UpdateNoErrors(liveObj, newObj runtime.Object, manager string) runtime.Object {
	managers := m.managers()
	update := managers.update
	if m.directFields {
		if u, ok := newObj.(*unstructured.Unstructured); ok {
			if l, ok := liveObj.(*unstructured.Unstructured); ok && l != nil && u != nil && managers.cr != nil {
				if out, ok := managers.cr.update(l, u, manager); ok {
					return out
				}
			}
			live := wrapUnstructured(liveObj)
			if l, ok := live.(directFields); ok && skippableLiveManagedFields(l.Unstructured, u) {
				live = liveFields{l}
			}
			return unwrap(update.UpdateNoErrors(live, wrapUnstructured(newObj), manager))
		}
	}
	return update.UpdateNoErrors(liveObj, newObj, manager)
}

// Apply implements handlers.FieldManager: the live object with the applied
// configuration merged in for manager. Errors are API statuses: 409
// Conflict with FieldManagerConflict causes unless force, 400 for an
// applied object of another kind or version, one that sets managedFields,
// or one that does not fit its type (undeclared fields, duplicate list
// keys, values its Go type cannot hold).
func (m *Manager) Apply(liveObj, appliedObj runtime.Object, manager string, force bool) (runtime.Object, error) {
	out, err := m.managers().fm.Apply(liveObj, appliedObj, manager, force)
	if err == nil {
		return out, nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return nil, err
	}
	// managedfields reports an applied object that does not fit its type
	// as a plain error, which would be a 500 (upstream answers so): it is
	// the client's mistake, a 400 with the same message.
	if m.unfit(appliedObj) {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return nil, fmt.Errorf("apply: %w", err)
}

// unfit tells whether an applied object fails the structured-merge-diff
// schema of its kind or cannot be converted to its served type.
func (m *Manager) unfit(appliedObj runtime.Object) bool {
	if _, err := m.tc.ObjectToTyped(appliedObj); err != nil {
		return true
	}
	_, err := m.convertor.ConvertToVersion(appliedObj.DeepCopyObject(), m.gv)
	return err != nil
}

// ForStorage returns the field manager of the main resource storage
// serves (kind gvk, built-in types of pkg/api/scheme), with storage's reset
// fields: the one the resource's handlers share. Bootstrap writers that
// write straight to storage record their writes with it, as upstream's
// record theirs by writing through a client.
func ForStorage(storage rest.Storage, gvk schema.GroupVersionKind) (*Manager, error) {
	c := Config{Kind: gvk}
	if r, ok := storage.(rest.ResetFieldsStrategy); ok {
		c.ResetFields = r.GetResetFields()
	}
	return New(c)
}

// Factory builds the field manager of each (sub)resource an
// installer.APIGroupVersion serves.
type Factory func(kind schema.GroupVersionKind, subresource string, resetFields map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error)

// NewFactory returns a Factory making managers with s (nil:
// pkg/api/scheme.Scheme) and the shared [TypeConverter].
func NewFactory(s *runtime.Scheme) Factory {
	return func(kind schema.GroupVersionKind, subresource string, resetFields map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error) {
		return New(Config{Kind: kind, Subresource: subresource, ResetFields: resetFields, Scheme: s})
	}
}

// crossGroupConvertor converts like the scheme, and also between groups
// for a kind served in two groups over one storage (core/v1 and
// events.k8s.io/v1 Event): managed fields recorded in one group's version
// are converted to the other's, which kube does through its internal
// version. The scheme must know a conversion between the two types.
type crossGroupConvertor struct{ *runtime.Scheme }

func (c crossGroupConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	gv, ok := target.(schema.GroupVersion)
	if !ok {
		return c.Scheme.ConvertToVersion(in, target)
	}
	kinds, _, err := c.ObjectKinds(in)
	if err != nil || len(kinds) == 0 || kinds[0].Group == gv.Group {
		return c.Scheme.ConvertToVersion(in, target)
	}
	return c.Scheme.ConvertToVersion(in, runtime.NewMultiGroupVersioner(gv, kinds[0].GroupKind()))
}
