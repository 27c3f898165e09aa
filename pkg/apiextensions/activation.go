package apiextensions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/installer"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// How a CRD is shown: whole, and only once Established.
//
// A client must never find one served version of a CRD without the
// others, nor any of them before the CRD is Established (clients that
// cache discovery, such as controller-runtime's REST mapper, fail on a
// half-served CRD). Nor, once it reads Established, a 404 from the
// CRD's resources. The controller therefore changes what is served in
// steps, the first ones invisible:
//
//  1. prepare builds what one CRD will serve (storages, stores, strategy,
//     field managers), reusing the storages of what it serves now;
//  2. stage builds, for one or more prepared CRDs, the handler of every
//     group-version they touch, as they will be served;
//  3. hold (only when the CRD's status is about to change) makes requests
//     for the staged resources wait: requests under a REST root that
//     does not exist yet, or for a resource a served root does not
//     have, are held until step 4 or a discard;
//  4. the controller writes the CRD's status (Established);
//  5. activate shows the staged change: the REST roots of all its
//     group-versions are swapped in one step (held requests then go
//     on), then their discovery is updated in one step, then their
//     OpenAPI documents; what the change replaces is released.
//
// discard undoes steps 1-3 when the status write fails. Stopping to
// serve a CRD is staged and activated the same way; there discovery goes
// first, so that it never lists a version whose root is gone. At start
// the controller stages every stored established CRD at once: one build
// per group-version, one discovery rebuild.

// prepared is what one CRD is to serve, built by prepare and not yet
// shown: next replaces old (next nil: the CRD stops being served).
type prepared struct {
	name string
	old  *crdServing
	next *crdServing
	// built are the versions of next with storages of their own, which
	// discard releases (the others reuse old's).
	built []*versionServing
}

// staged is a change of crds ready to be shown: the prepared CRDs and
// the group-versions rebuilt for it (activate applies ps to crds).
type staged struct {
	ps      []*prepared
	builds  []gvBuild
	changes int // crServer.changes the change was built against
	held    *gate
	// laterOpenAPI leaves the OpenAPI documents to publishOpenAPI
	// (upstream publishes them asynchronously too).
	laterOpenAPI bool
}

// servesAsIs reports whether c serves crd as it is: same object, spec
// and accepted names (a status change alone changes nothing served).
func (c *crdServing) servesAsIs(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return c.uid == crd.UID &&
		equality.Semantic.DeepEqual(c.crd.Spec, crd.Spec) &&
		equality.Semantic.DeepEqual(c.crd.Status.AcceptedNames, crd.Status.AcceptedNames)
}

// servesAsIs reports whether crd is served as it is now.
func (s *crServer) servesAsIs(crd *apiextensionsv1.CustomResourceDefinition) bool {
	s.mu.Lock()
	cur := s.crds[crd.Name]
	s.mu.Unlock()
	return cur != nil && cur.servesAsIs(crd)
}

// prepare builds what crd, which must be established, is to serve,
// without showing it. It returns nil when crd is served as it is (a
// deleted CRD's resources then refuse creates from now on).
func (s *crServer) prepare(crd *apiextensionsv1.CustomResourceDefinition) (*prepared, error) {
	s.mu.Lock()
	old := s.crds[crd.Name]
	s.mu.Unlock()
	if old != nil && old.servesAsIs(crd) {
		if crd.DeletionTimestamp != nil {
			old.terminating.Store(true)
		}
		return nil, nil
	}
	reuseFrom := old
	if old != nil && old.uid != crd.UID {
		reuseFrom = nil // another CRD of the same name: nothing to keep
	}
	next := &crdServing{uid: crd.UID, crd: crd.DeepCopy(), versions: map[string]*versionServing{}, defaulter: customresource.NewDefaulter(crd),
		warnings: deprecationWarnings(crd), deprecated: deprecatedAPIs(s.metrics, crd)}
	meta, err := s.metaSchemas()
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", crd.Name, err)
	}
	next.typeConverter = customresource.NewTypeConverter(crd, meta, s.logger)
	if next.converter, err = conversion.New(crd, conversion.Options{ServiceResolver: s.conversionResolver, Logger: s.logger, X509: s.conversionX509}); err != nil {
		// As upstream: a CRD whose converter cannot be built is not
		// served (the controller retries and logs why).
		return nil, fmt.Errorf("serve %s: conversion: %w", crd.Name, err)
	}
	next.terminating.Store(crd.DeletionTimestamp != nil)
	p := &prepared{name: crd.Name, old: old, next: next}
	sv := storageVersion(crd)
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		var reuse *versionServing
		if reuseFrom != nil {
			if o := reuseFrom.versions[v.Name]; o != nil && o.storageVersion == sv && readsAsBefore(reuseFrom.crd, crd, v) {
				reuse = o
			}
		}
		vs, err := s.buildVersion(crd, v, sv, reuse, next.converter)
		if err != nil {
			p.release()
			return nil, fmt.Errorf("serve %s %s: %w", crd.Name, v.Name, err)
		}
		if reuse == nil {
			p.built = append(p.built, vs)
		}
		next.versions[v.Name] = vs
	}
	return p, nil
}

// readsAsBefore tells whether objects read from storage for served
// version v of crd decode as they did under old: the same schemas (reads
// are pruned against the stored and the served version's, and get the
// served one's defaults), conversion and selectable fields (the field
// attributes a watch cache keeps). A storage is kept across a CRD update
// only then: the watch cache (and the memory backend's decoded list
// state) holds objects decoded under old, so a default added to the
// schema would never show on reads of objects stored before (upstream
// rebuilds the storage on every spec change: apiextensions-apiserver
// pkg/apiserver/customresource_handler.go, updateCustomResourceDefinition
// -> removeStorage_locked). Other changes (printer columns, validation
// rules, subresources, names) keep the storage and its watches open.
func readsAsBefore(old, crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) bool {
	var was *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range old.Spec.Versions {
		if old.Spec.Versions[i].Name == v.Name {
			was = &old.Spec.Versions[i]
		}
	}
	return was != nil &&
		equality.Semantic.DeepEqual(versionSchemas(old), versionSchemas(crd)) &&
		equality.Semantic.DeepEqual(was.SelectableFields, v.SelectableFields) &&
		equality.Semantic.DeepEqual(old.Spec.Conversion, crd.Spec.Conversion)
}

// release frees what p built.
func (p *prepared) release() {
	if p == nil || p.next == nil {
		return
	}
	for _, v := range p.built {
		v.close()
	}
	p.next.closeConverter()
}

// unserve prepares the end of the serving of the CRD called name (nil
// when it is not served).
func (s *crServer) unserve(name string) *prepared {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.crds[name]
	if old == nil {
		return nil
	}
	return &prepared{name: name, old: old}
}

// stage builds the group-versions that the prepared CRDs of ps (nil
// entries skipped) touch, as they will be served; it returns nil when ps
// change nothing. On error ps are released.
func (s *crServer) stage(ps ...*prepared) (*staged, error) {
	st := &staged{}
	for _, p := range ps {
		if p != nil {
			st.ps = append(st.ps, p)
		}
	}
	if len(st.ps) == 0 {
		return nil, nil
	}
	// The view is what the groups the change touches will serve: their
	// CRDs now, with the change applied. The other groups are not read,
	// so that adding a CRD costs the work of its group.
	groups := map[string]bool{}
	for _, p := range st.ps {
		for _, c := range []*crdServing{p.old, p.next} {
			if c != nil {
				groups[c.crd.Spec.Group] = true
			}
		}
	}
	view := map[string]*crdServing{}
	s.mu.Lock()
	for g := range groups {
		maps.Copy(view, s.byGroup[g])
	}
	st.changes = s.changes
	s.mu.Unlock()
	var gvs []schema.GroupVersion
	for _, p := range st.ps {
		if p.old != nil {
			gvs = append(gvs, servedGroupVersions(p.old)...)
		}
		if p.next != nil {
			gvs = append(gvs, servedGroupVersions(p.next)...)
			view[p.name] = p.next
		} else {
			delete(view, p.name)
		}
	}
	builds, err := s.buildGroupVersions(view, gvs)
	if err != nil {
		st.release()
		return nil, err
	}
	st.builds = builds
	return st, nil
}

// release frees what st built.
func (st *staged) release() {
	for _, p := range st.ps {
		p.release()
	}
}

// hold makes requests for st's resources wait until st is activated or
// discarded: those under a REST root st adds, and those for a resource
// st adds to a served root.
func (s *crServer) hold(st *staged) {
	if st == nil {
		return
	}
	g := &gate{resources: map[schema.GroupVersionResource]bool{}, done: make(chan struct{})}
	for _, p := range st.ps {
		if p.next == nil {
			continue
		}
		plural := p.next.crd.Status.AcceptedNames.Plural
		for _, gv := range servedGroupVersions(p.next) {
			g.resources[gv.WithResource(plural)] = true
		}
	}
	roots := s.handler.RESTRoots()
	for _, b := range st.builds {
		if root := gvRoot(b.gv); b.handler != nil && !containsSorted(roots, root) {
			g.roots = append(g.roots, root)
		}
	}
	st.held = g
	s.gate.Store(g)
	if len(g.roots) > 0 {
		waiting := make(map[string]http.Handler, len(g.roots))
		for _, root := range g.roots {
			waiting[root] = http.HandlerFunc(s.serveHeld)
		}
		s.handler.UpdateREST(waiting, nil)
	}
}

// discard drops st: held requests go on (to a 404), what it built is
// released.
func (s *crServer) discard(st *staged) {
	if st == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discardLocked(st)
}

func (s *crServer) discardLocked(st *staged) {
	if g := st.held; g != nil {
		s.handler.UpdateREST(nil, g.roots)
		s.openGate(g)
	}
	st.release()
}

// activate shows st in one step and releases what it replaces (see the
// comment at the top of the file). st must have been staged against the
// crds served now: the controller's single worker stages and activates
// (or discards) one change after the other.
func (s *crServer) activate(st *staged) error {
	if st == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.changes != s.changes {
		// A programming error: showing st would undo the change made
		// since it was staged.
		s.discardLocked(st)
		return errors.New("activate: the served CRDs changed since the change was staged")
	}
	for _, p := range st.ps {
		s.setCRDLocked(p.name, p.next)
	}
	s.changes++
	for _, p := range st.ps {
		if p.next != nil {
			for _, v := range p.next.versions {
				v.commit()
			}
		}
	}
	err := s.installLocked(st.builds, st.held, !st.laterOpenAPI)
	// What the change replaces goes: storages no longer used (their
	// watches end) and converters.
	for _, p := range st.ps {
		if p.old == nil {
			continue
		}
		for name, o := range p.old.versions {
			if n := p.next; n == nil || n.versions[name] == nil || n.versions[name].storage != o.storage {
				o.close()
			}
		}
		p.old.closeConverter()
	}
	return err
}

// remove stops serving the CRD called name (its watches end).
func (s *crServer) remove(name string) error {
	st, err := s.stage(s.unserve(name))
	if err != nil {
		return err
	}
	return s.activate(st)
}

// gvBuild is the rebuilt serving of one group-version: handler nil when
// nothing serves it any more.
type gvBuild struct {
	gv        schema.GroupVersion
	handler   http.Handler
	resources []metav1.APIResource
	crds      []*apiextensionsv1.CustomResourceDefinition // for OpenAPI, by name
}

func gvRoot(gv schema.GroupVersion) string { return "/apis/" + gv.Group + "/" + gv.Version }

func containsSorted(sorted []string, s string) bool {
	i := sort.SearchStrings(sorted, s)
	return i < len(sorted) && sorted[i] == s
}

// buildGroupVersions builds the handler, discovery and OpenAPI input of
// each group-version of gvs as crds (at least those of gvs' groups) serve
// it.
func (s *crServer) buildGroupVersions(crds map[string]*crdServing, gvs []schema.GroupVersion) ([]gvBuild, error) {
	byGV := map[schema.GroupVersion][]*crdServing{}
	want := map[schema.GroupVersion]bool{}
	for _, gv := range gvs {
		want[gv] = true
	}
	for _, c := range crds {
		for v := range c.versions {
			if gv := (schema.GroupVersion{Group: c.crd.Spec.Group, Version: v}); want[gv] {
				byGV[gv] = append(byGV[gv], c)
			}
		}
	}
	out := make([]gvBuild, 0, len(want))
	var errs []error
	for gv := range want {
		b, err := s.buildGroupVersion(gv, byGV[gv])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, b)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("build routes: %w", errors.Join(errs...))
	}
	sort.Slice(out, func(i, j int) bool { return gvRoot(out[i].gv) < gvRoot(out[j].gv) })
	return out, nil
}

// buildGroupVersion builds gv as served by served (the CRDs serving it).
func (s *crServer) buildGroupVersion(gv schema.GroupVersion, served []*crdServing) (gvBuild, error) {
	if len(served) == 0 {
		return gvBuild{gv: gv}, nil
	}
	sort.Slice(served, func(i, j int) bool { return served[i].crd.Name < served[j].crd.Name })
	stores := map[string]rest.Storage{}
	scales := map[string]rest.Storage{}
	byResource := map[string]*crdServing{}
	byKind := map[schema.GroupVersionKind]customresource.FieldManagement{}
	convertor := customresource.Convertor{Kinds: map[schema.GroupVersionKind]customresource.KindLabels{}}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(served))
	for i, c := range served {
		crds[i] = c.crd
		v := c.versions[gv.Version]
		plural := c.crd.Status.AcceptedNames.Plural
		stores[plural] = v.store
		if v.status != nil {
			stores[plural+"/status"] = v.status
		}
		if v.scale != nil {
			stores[plural+"/scale"] = v.scale
			scales[plural+"/scale"] = v.scale
		}
		byResource[plural] = c
		kind := gv.WithKind(c.crd.Status.AcceptedNames.Kind)
		byKind[kind] = customresource.FieldManagement{TypeConverter: c.typeConverter, Defaulter: c.defaulter, Converter: c.converter}
		convertor.Kinds[kind] = customresource.KindLabels{
			Namespaced: c.crd.Spec.Scope == apiextensionsv1.NamespaceScoped, Fields: customresource.LabelNames(v.selectableFields()),
		}
	}
	g := &installer.APIGroupVersion{
		GroupVersion:      gv,
		Storage:           stores,
		Serializer:        s.serializer,
		Convertor:         convertor,
		FieldManagers:     customresource.FieldManagers(byKind),
		PatchTypes:        crPatchTypes,
		Admission:         s.admission,
		MinRequestTimeout: s.minRequestTimeout,
		Metrics:           s.metrics,
		DiscoveryOrder: func(r []metav1.APIResource) []metav1.APIResource {
			return discoveryOrder(r, served)
		},
		PlainRoutes: true,
		Logger:      s.logger,
	}
	h, resources, err := g.Build()
	if err != nil {
		return gvBuild{}, fmt.Errorf("build %s: %w", gv, err)
	}
	var scaleHandler http.Handler
	if len(scales) > 0 {
		// Scale is a built-in type, read in protobuf too, but written in
		// JSON and YAML only, as upstream (see ScaleSerializer).
		sg := *g
		sg.Storage, sg.Serializer, sg.Convertor = scales, customresource.ScaleSerializer{NegotiatedSerializer: scheme.Codecs}, nil
		if scaleHandler, _, err = sg.Build(); err != nil {
			return gvBuild{}, fmt.Errorf("build the scale subresources of %s: %w", gv, err)
		}
	}
	return gvBuild{
		gv:        gv,
		handler:   &crHandler{next: h, scale: scaleHandler, crds: byResource, server: s},
		resources: resources,
		crds:      crds,
	}, nil
}

// crVerbs is the order in which upstream's discovery controller lists a
// custom resource's verbs (customresource_discovery_controller.go,
// apiextensions-apiserver v0.37.2); the installer lists them sorted.
var crVerbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// discoveryOrder returns resources as upstream's discovery lists a
// group-version's custom resources: CRD by CRD (served's order: by name;
// upstream's is its informer cache's), each resource followed by its
// status, then its scale subresource, and the resource's verbs in crVerbs'
// order.
func discoveryOrder(resources []metav1.APIResource, served []*crdServing) []metav1.APIResource {
	byName := make(map[string]metav1.APIResource, len(resources))
	for _, r := range resources {
		byName[r.Name] = r
	}
	out := make([]metav1.APIResource, 0, len(resources))
	take := func(name string) {
		if r, ok := byName[name]; ok {
			out = append(out, r)
			delete(byName, name)
		}
	}
	for _, c := range served {
		plural := c.crd.Status.AcceptedNames.Plural
		if r, ok := byName[plural]; ok {
			verbs := make(metav1.Verbs, 0, len(r.Verbs))
			for _, v := range crVerbs {
				if slices.Contains(r.Verbs, v) {
					verbs = append(verbs, v)
				}
			}
			for _, v := range r.Verbs {
				if !slices.Contains(crVerbs, v) {
					verbs = append(verbs, v)
				}
			}
			r.Verbs = verbs
			byName[plural] = r
		}
		take(plural)
		take(plural + "/status")
		take(plural + "/scale")
	}
	for _, r := range resources { // none expected: kept, in the installer's order
		if _, ok := byName[r.Name]; ok {
			out = append(out, r)
		}
	}
	return out
}

// installLocked shows builds: the REST roots of every group-version in
// one swap (held requests then go on), then discovery in one update
// (discovery removals first, so that discovery never lists a version
// whose root is gone), then, with openAPI, the OpenAPI documents.
func (s *crServer) installLocked(builds []gvBuild, held *gate, openAPI bool) error {
	set := map[string]http.Handler{}
	var removeRoots []string
	setDisc := map[schema.GroupVersion][]metav1.APIResource{}
	var removeDisc []schema.GroupVersion
	for _, b := range builds {
		if b.handler == nil {
			removeRoots = append(removeRoots, gvRoot(b.gv))
			removeDisc = append(removeDisc, b.gv)
			continue
		}
		set[gvRoot(b.gv)] = b.handler
		setDisc[b.gv] = b.resources
	}
	var errs []error
	if len(removeDisc) > 0 {
		if err := s.discovery.Update(nil, removeDisc); err != nil {
			errs = append(errs, fmt.Errorf("discovery: %w", err))
		}
	}
	s.handler.UpdateREST(set, removeRoots)
	if held != nil {
		s.openGate(held)
	}
	if len(setDisc) > 0 {
		if err := s.discovery.Update(setDisc, nil, discovery.WithPriority(discovery.CRDPriority), discovery.WithResponseKindGroupVersion()); err != nil {
			errs = append(errs, fmt.Errorf("discovery: %w", err))
		}
	}
	if openAPI {
		s.publishOpenAPILocked(builds)
	}
	return errors.Join(errs...)
}

// publishOpenAPI publishes the OpenAPI documents of a change activated
// without them; the caller makes sure no later change was published
// before.
func (s *crServer) publishOpenAPI(st *staged) {
	if st == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publishOpenAPILocked(st.builds)
}

func (s *crServer) publishOpenAPILocked(builds []gvBuild) {
	for _, b := range builds {
		if b.handler == nil {
			s.openAPI.remove(b.gv)
			continue
		}
		// Built lazily: build errors are logged when a document is served.
		s.openAPI.set(b.gv, b.crds)
	}
}

// gate holds requests for resources about to be served.
type gate struct {
	// resources are those the held change adds; roots the REST roots it
	// adds (served by serveHeld until then).
	resources map[schema.GroupVersionResource]bool
	roots     []string
	done      chan struct{}
}

// heldFor bounds how long a request waits at a gate: the status write
// between hold and activate takes milliseconds; a gate left closed by a
// bug must not hang requests.
const heldFor = 10 * time.Second

// openGate lets the requests held by g go on.
func (s *crServer) openGate(g *gate) {
	s.gate.CompareAndSwap(g, nil)
	close(g.done)
}

type redispatchedKey struct{}

// await holds req while a gate holds gvr (any resource when anyResource)
// and reports whether it did: the request is then dispatched again, to
// what is served now. A request dispatched again is never held twice.
func (s *crServer) await(req *http.Request, gvr schema.GroupVersionResource, anyResource bool) bool {
	if req.Context().Value(redispatchedKey{}) != nil {
		return false
	}
	g := s.gate.Load()
	if g == nil || (!anyResource && !g.resources[gvr]) {
		return false
	}
	t := time.NewTimer(heldFor)
	defer t.Stop()
	select {
	case <-g.done:
	case <-req.Context().Done():
	case <-t.C:
	}
	return true
}

// redispatch serves req again from the top of this server's routes.
func (s *crServer) redispatch(w http.ResponseWriter, req *http.Request) {
	s.handler.Director.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), redispatchedKey{}, true)))
}

// serveHeld serves the REST root of a group-version about to be served:
// it holds the request until the change is shown or dropped, then serves
// it as what is then served does (a 404 if nothing).
func (s *crServer) serveHeld(w http.ResponseWriter, req *http.Request) {
	if !s.await(req, schema.GroupVersionResource{}, true) && req.Context().Value(redispatchedKey{}) != nil {
		handlers.NotFoundInRoot(w, req)
		return
	}
	s.redispatch(w, req)
}

// heldResource is the group-version-resource of a request, for await.
func heldResource(info *request.RequestInfo) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
}
