package installer

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// APIGroupVersion is one group-version's resources, served under one REST
// root: /api/v1 for the core group, /apis/<group>/<version> otherwise.
type APIGroupVersion struct {
	GroupVersion schema.GroupVersion

	// Storage maps a path to its storage: "configmaps" for a resource,
	// "configmaps/status" or "namespaces/finalize" for a subresource. Each
	// main resource must implement rest.Scoper; what else it implements
	// (rest.Getter, rest.Lister, ...) decides the verbs served.
	Storage map[string]rest.Storage

	// Scheme knows the kinds served (creater, convertor, typer); nil means
	// pkg/api/scheme.Scheme.
	Scheme *runtime.Scheme
	// Convertor, optional, replaces Scheme as the convertor (field
	// selector labels, Table rows with includeObject=Object): custom
	// resources have their own.
	Convertor runtime.ObjectConvertor
	// Serializer encodes and decodes them; nil means pkg/api/scheme.Codecs.
	Serializer runtime.NegotiatedSerializer
	// ParameterCodec decodes query parameters; nil means
	// pkg/api/scheme.ParameterCodec.
	ParameterCodec runtime.ParameterCodec

	// MinRequestTimeout is --min-request-timeout (watch duration base).
	MinRequestTimeout time.Duration
	// MaxRequestBodyBytes bounds request bodies; 0 means 3 MiB.
	MaxRequestBodyBytes int64
	// FieldManagers, optional, builds the field manager of each
	// (sub)resource path: its kind, subresource ("" for the main
	// resource) and the fields its storage resets (rest.ResetFieldsStrategy,
	// nil if none). The field manager records managedFields on every
	// write and serves server-side apply; without one, writes leave
	// managedFields alone and apply answers 415.
	// pkg/endpoints/fieldmanager.NewFactory makes one for built-in types.
	FieldManagers func(kind schema.GroupVersionKind, subresource string, resetFields map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error)
	// PatchTypes, optional, are the patch content types the group-version
	// accepts; PATCH with any other Content-Type answers 415 listing
	// them. nil means handlers.PatchTypes, plus server-side apply
	// (handlers.ApplyPatchType) where there is a field manager. Apply is
	// never served without a field manager. Custom resources leave out
	// strategic merge patch, which needs Go types.
	PatchTypes []string
	// Admission validates every write (optional).
	Admission admission.Chain
	// Metrics receives the watch events sent (optional).
	Metrics *metrics.Metrics
	// DiscoveryOrder, optional, orders the APIResources as discovery lists
	// them (both the root's APIResourceList and what Build returns);
	// without it they are sorted by name, as upstream's installer lists
	// built-in resources. Custom resources have upstream's discovery
	// controller's order.
	DiscoveryOrder func([]metav1.APIResource) []metav1.APIResource
	// PlainRoutes: the routes are not go-restful's (custom resources,
	// which upstream's crdHandler serves), so they make none of its
	// route-level Content-Type and Accept checks (see restful.go).
	PlainRoutes bool

	Logger *slog.Logger
}

// Root is the REST root path of the group-version.
func (g *APIGroupVersion) Root() string {
	if g.GroupVersion.Group == "" {
		return "/api/" + g.GroupVersion.Version
	}
	return "/apis/" + g.GroupVersion.Group + "/" + g.GroupVersion.Version
}

// Mounter is where a group-version's handler is mounted: a server's
// routes (server.APIServerHandler is one).
type Mounter interface {
	// HandleREST serves root and every path below it with h.
	HandleREST(root string, h http.Handler)
}

// Install builds the group-version's handler and mounts it on m as the
// REST root Root(). It returns the APIResources served, sorted by name, as
// legacy discovery lists them (GET on the root serves the same list as an
// APIResourceList).
func (g *APIGroupVersion) Install(m Mounter) ([]metav1.APIResource, error) {
	handler, resources, err := g.Build()
	if err != nil {
		return nil, err
	}
	m.HandleREST(g.Root(), handler)
	return resources, nil
}

// Build returns the group-version's handler, without registering it, and
// its APIResources. The handler expects the request.RequestInfo of the
// filter chain on the request context.
func (g *APIGroupVersion) Build() (http.Handler, []metav1.APIResource, error) {
	if g.GroupVersion.Version == "" {
		return nil, nil, errors.New("group version has no version")
	}
	g.complete()
	paths := make([]string, 0, len(g.Storage))
	for p := range g.Storage {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	h := &groupHandler{
		root:       g.Root(),
		gv:         g.GroupVersion,
		serializer: g.Serializer,
		logger:     g.Logger,
		routes:     make(map[string]*routes, len(paths)),
	}
	if !g.PlainRoutes {
		h.rootProduces, _ = handlers.MediaTypesFor(g.Serializer)
	}
	h.plain = g.PlainRoutes
	resources := make([]metav1.APIResource, 0, len(paths))
	for _, p := range paths {
		r, res, err := g.register(p, g.Storage[p])
		if err != nil {
			return nil, nil, fmt.Errorf("install %s in %s: %w", p, g.GroupVersion, err)
		}
		h.routes[p] = r
		resources = append(resources, res)
	}
	if g.DiscoveryOrder != nil {
		resources = g.DiscoveryOrder(resources)
	}
	h.discovery = &metav1.APIResourceList{GroupVersion: g.GroupVersion.String(), APIResources: resources}
	return h, resources, nil
}

// OpenAPIResources describes the (sub)resources listed in resources (what
// Install or Build returned) for the OpenAPI documents: their discovery
// entries and what the storage tells beyond them (a DELETE answering with
// the deleted object).
func (g *APIGroupVersion) OpenAPIResources(resources []metav1.APIResource) []openapi.Resource {
	out := openapi.ResourcesOf(g.GroupVersion, resources)
	for i := range out {
		storage := g.Storage[out[i].Name]
		if d, ok := storage.(rest.MayReturnFullObjectDeleter); ok {
			out[i].DeleteReturnsObject = d.DeleteReturnsDeletedObject()
		}
		if m, ok := storage.(rest.StorageMetadata); ok {
			out[i].Produces = m.ProducesMIMETypes(http.MethodGet)
			_, out[i].ProducesString = m.ProducesObject(http.MethodGet).(string)
		}
		switch c := storage.(type) {
		case rest.GetOptionsConnecter:
			out[i].GetOptions = c.NewGetOptions()
		case rest.Connecter:
			connect := &openapi.Connect{Methods: c.ConnectMethods(), Options: c.New()}
			if sc, ok := c.(rest.SubpathConnecter); ok {
				connect.Subpath = sc.ConnectSubpath()
			}
			out[i].Connect = connect
		}
	}
	return out
}

func (g *APIGroupVersion) complete() {
	if g.Scheme == nil {
		g.Scheme = scheme.Scheme
	}
	if g.Serializer == nil {
		g.Serializer = scheme.Codecs
	}
	if g.ParameterCodec == nil {
		g.ParameterCodec = scheme.ParameterCodec
	}
	if g.Logger == nil {
		g.Logger = slog.Default()
	}
}

func (g *APIGroupVersion) convertor() runtime.ObjectConvertor {
	if g.Convertor != nil {
		return g.Convertor
	}
	return g.Scheme
}

// register builds the routes of one (sub)resource path and its discovery
// entry, from the interfaces its storage implements (as upstream's
// installer: verbs list, create, deletecollection, watch (list and watch
// both needed for collection watches), get, update, patch, delete, watch).
func (g *APIGroupVersion) register(path string, storage rest.Storage) (*routes, metav1.APIResource, error) {
	resource, sub, isSub := strings.Cut(path, "/")
	if resource == "" || (isSub && (sub == "" || strings.Contains(sub, "/"))) {
		return nil, metav1.APIResource{}, fmt.Errorf("invalid storage path %q", path)
	}

	scoper, ok := storage.(rest.Scoper)
	if isSub {
		if parent, ok2 := g.Storage[resource].(rest.Scoper); ok2 {
			scoper, ok = parent, true
		}
	}
	if !ok {
		return nil, metav1.APIResource{}, fmt.Errorf("%q must implement rest.Scoper", path)
	}
	namespaced := scoper.NamespaceScoped()

	kind, err := g.kindOf(storage)
	if err != nil {
		return nil, metav1.APIResource{}, err
	}

	getter, isGetter := storage.(rest.Getter)
	lister, isLister := storage.(rest.Lister)
	watcher, isWatcher := storage.(rest.Watcher)
	creater, isCreater := storage.(rest.Creater)
	updater, isUpdater := storage.(rest.Updater)
	patcher, isPatcher := storage.(rest.Patcher)
	deleter, isDeleter := storage.(rest.GracefulDeleter)
	collectionDeleter, isCollectionDeleter := storage.(rest.CollectionDeleter)
	tableConvertor, _ := storage.(rest.TableConvertor)
	connecter, isConnecter := storage.(rest.Connecter)

	var fieldManager handlers.FieldManager
	if g.FieldManagers != nil && (isCreater || isUpdater || isPatcher) {
		var resetFields map[fieldpath.APIVersion]*fieldpath.Set
		if r, ok := storage.(rest.ResetFieldsStrategy); ok {
			resetFields = r.GetResetFields()
		}
		if fieldManager, err = g.FieldManagers(kind, sub, resetFields); err != nil {
			return nil, metav1.APIResource{}, fmt.Errorf("field manager of %s: %w", path, err)
		}
	}

	pruner, _ := storage.(handlers.UnknownFieldPruner)
	decodedDefaulter, _ := storage.(handlers.DecodedDefaulter)
	var checkConversion func(runtime.Object) error
	if c, ok := storage.(conversionChecker); ok {
		checkConversion = c.ConversionCheck()
	}
	sharedWatch := false
	if s, ok := storage.(rest.SharedObjectWatcher); ok && isWatcher {
		sharedWatch = s.WatchSharesObjects(watcher)
	}
	sharedList := false
	if s, ok := storage.(rest.SharedObjectLister); ok && isLister {
		sharedList = s.ListSharesObjects(lister)
	}
	sharedGet := false
	if s, ok := storage.(rest.SharedObjectGetter); ok && isGetter {
		sharedGet = s.GetSharesObjects(getter)
	}
	var accepts func(schema.GroupVersion) bool
	if a, ok := storage.(rest.GroupVersionAcceptor); ok {
		accepts = a.AcceptsGroupVersion
	}
	scope := &handlers.RequestScope{
		Serializer:          g.Serializer,
		ParameterCodec:      g.ParameterCodec,
		Creater:             g.Scheme,
		Convertor:           g.convertor(),
		Typer:               g.Scheme,
		Defaulter:           g.Scheme,
		TableConvertor:      tableConvertor,
		FieldManager:        fieldManager,
		Pruner:              pruner,
		DecodedDefaulter:    decodedDefaulter,
		CheckConversion:     checkConversion,
		Admission:           g.Admission,
		AcceptsGroupVersion: accepts,
		SharedWatchObjects:  sharedWatch,
		SharedListObjects:   sharedList,
		SharedGetObjects:    sharedGet,
		Resource:            g.GroupVersion.WithResource(resource),
		Subresource:         sub,
		Kind:                kind,
		Namespaced:          namespaced,
		MaxRequestBodyBytes: g.MaxRequestBodyBytes,
		MinRequestTimeout:   g.MinRequestTimeout,
		Metrics:             g.Metrics,
		Logger:              g.Logger,
	}

	r := &routes{namespaced: namespaced, subresource: isSub}
	verbs := map[string]bool{}
	if isSub {
		// Subresources are served on the item path only (get, update,
		// patch, create, delete).
		isLister, isWatcher = false, false
	}
	if isLister || isWatcher {
		var l rest.Lister
		var wt rest.Watcher
		if isLister {
			l = lister
			verbs["list"] = true
		}
		if isWatcher {
			wt = watcher
		}
		lh := handlers.ListResource(l, wt, scope)
		if isLister {
			r.list = lh
		}
		if isWatcher && isLister {
			r.watchList = lh
			verbs["watch"] = true
		}
		if isWatcher {
			r.watch = lh
			verbs["watch"] = true
		}
	}
	if isCreater {
		r.create = handlers.CreateResource(creater, scope)
		verbs["create"] = true
	}
	if isCollectionDeleter {
		r.deleteCollection = handlers.DeleteCollectionResource(collectionDeleter, scope)
		verbs["deletecollection"] = true
	}
	if isGetter {
		r.get = handlers.GetResource(getter, scope)
		verbs["get"] = true
	}
	if isUpdater {
		r.update = handlers.UpdateResource(updater, scope)
		verbs["update"] = true
	}
	if isPatcher {
		r.patch = handlers.PatchResource(patcher, scope, g.PatchTypes)
		verbs["patch"] = true
	}
	if isDeleter {
		r.delete = handlers.DeleteResource(deleter, scope)
		verbs["delete"] = true
	}
	if isConnecter && isSub {
		r.connect = handlers.ConnectResource(connecter, scope)
		if sc, ok := connecter.(rest.SubpathConnecter); ok {
			r.connectSubpath = sc.ConnectSubpath()
		}
		r.connectMethods = map[string]bool{}
		for _, m := range connecter.ConnectMethods() {
			r.connectMethods[m] = true
			if v := connectVerbs[m]; v != "" {
				verbs[v] = true
			}
		}
	}

	if !g.PlainRoutes {
		g.restfulRoutes(r, storage, scope)
	}

	res := metav1.APIResource{
		Name:       path,
		Namespaced: namespaced,
		Kind:       kind.Kind,
		Verbs:      make([]string, 0, len(verbs)),
	}
	for v := range verbs {
		res.Verbs = append(res.Verbs, v)
	}
	sort.Strings(res.Verbs)
	if p, ok := storage.(rest.GroupVersionKindProvider); ok {
		gvk := p.GroupVersionKind(g.GroupVersion)
		res.Group, res.Version, res.Kind = gvk.Group, gvk.Version, gvk.Kind
	}
	if !isSub {
		if p, ok := storage.(rest.SingularNameProvider); ok {
			res.SingularName = p.GetSingularName()
		} else {
			res.SingularName = strings.ToLower(kind.Kind)
		}
		if p, ok := storage.(rest.ShortNamesProvider); ok {
			res.ShortNames = p.ShortNames()
		}
		if p, ok := storage.(rest.CategoriesProvider); ok {
			res.Categories = p.Categories()
		}
		if p, ok := storage.(storageVersioner); ok {
			if sv := p.StorageGroupVersion(); !sv.Empty() {
				res.StorageVersionHash = StorageVersionHash(sv.WithKind(kind.Kind))
			}
		}
	}
	if msg, removed := deprecation(storage.New(), kind); msg != "" {
		r.deprecatedAll(msg, g.Metrics.DeprecatedAPI(g.GroupVersion.Group, g.GroupVersion.Version, resource, sub, removed))
	}
	return r, res, nil
}

// conversionChecker is a storage whose objects kube-apiserver's conversion
// to an internal version may refuse (generic.Store.CheckConversion): the
// check, nil when there is none.
type conversionChecker interface {
	ConversionCheck() func(runtime.Object) error
}

// storageVersioner is a storage that knows the group-version its objects
// are stored as (generic.Store).
type storageVersioner interface {
	StorageGroupVersion() schema.GroupVersion
}

// StorageVersionHash is discovery's storageVersionHash of a resource stored
// as gvk: as upstream (k8s.io/apiserver pkg/endpoints/discovery
// storageversionhash.go), the standard base64 of the first 8 bytes of the
// SHA-256 of "group/version/kind". Clients (the storage version migrator)
// compare it, never decode it. Like upstream, only resources (not
// subresources) with a storage carry one.
func StorageVersionHash(gvk schema.GroupVersionKind) string {
	sum := sha256.Sum256([]byte(gvk.Group + "/" + gvk.Version + "/" + gvk.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// connectVerbs are the verbs a connect subresource's methods show in
// discovery (HEAD and OPTIONS add none).
var connectVerbs = map[string]string{
	http.MethodGet:    "get",
	http.MethodPost:   "create",
	http.MethodPut:    "update",
	http.MethodPatch:  "patch",
	http.MethodDelete: "delete",
}

// kindOf is the kind a storage serves in this group-version: the
// storage's own answer, else the kind of New() registered in this group.
func (g *APIGroupVersion) kindOf(storage rest.Storage) (schema.GroupVersionKind, error) {
	if p, ok := storage.(rest.GroupVersionKindProvider); ok {
		return p.GroupVersionKind(g.GroupVersion), nil
	}
	obj := storage.New()
	kinds, _, err := g.Scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kind of %T: %w", obj, err)
	}
	for _, k := range kinds {
		if k.Group == g.GroupVersion.Group {
			return g.GroupVersion.WithKind(k.Kind), nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("unable to locate fully qualified kind for %T: found %v when registering for %v", obj, kinds, g.GroupVersion)
}

// restfulRoutes gives r's handlers the route-level checks of upstream's
// go-restful routes (see restful.go), with the Consumes and Produces
// upstream's installer gives each verb's route.
func (g *APIGroupVersion) restfulRoutes(r *routes, storage rest.Storage, scope *handlers.RequestScope) {
	mediaTypes, streamMediaTypes := handlers.MediaTypesFor(g.Serializer)
	allMediaTypes := slices.Concat(mediaTypes, streamMediaTypes)
	produces := func(method string, types []string) []string {
		if m, ok := storage.(rest.StorageMetadata); ok {
			return slices.Concat(m.ProducesMIMETypes(method), types)
		}
		return types
	}
	ns := g.Serializer
	r.list = restfulRoute(r.list, ns, nil, produces(http.MethodGet, allMediaTypes))
	r.watchList = restfulRoute(r.watchList, ns, nil, allMediaTypes)
	r.watch = restfulRoute(r.watch, ns, nil, allMediaTypes)
	r.get = restfulRoute(r.get, ns, nil, produces(http.MethodGet, mediaTypes))
	r.create = restfulRoute(r.create, ns, nil, produces(http.MethodPost, mediaTypes))
	r.update = restfulRoute(r.update, ns, nil, produces(http.MethodPut, mediaTypes))
	r.patch = restfulRoute(r.patch, ns, scope.ServedPatchTypes(g.PatchTypes), produces(http.MethodPatch, mediaTypes))
	r.delete = restfulRoute(r.delete, ns, nil, produces(http.MethodDelete, mediaTypes))
	r.deleteCollection = restfulRoute(r.deleteCollection, ns, nil, produces(http.MethodDelete, mediaTypes))
	// Connect routes consume and produce anything; pods/log, which kapi
	// serves as a connect subresource, is a get route upstream (its
	// storage says what it produces).
	if _, ok := storage.(rest.StorageMetadata); ok {
		r.connect = restfulRoute(r.connect, ns, nil, produces(http.MethodGet, mediaTypes))
	}
}
