package apiextensions

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// crServer installs and removes the routes, discovery and OpenAPI
// documents of established CRDs. Several CRDs of one group-version share
// its REST root: every change rebuilds the group-version's handler and
// replaces it. How a change is shown in one step, and only once the CRD
// is Established, is activation.go's. Methods are called by the
// controller's single worker (and by tests); mu guards crds for the
// finalizer's and the request handlers' reads.
type crServer struct {
	handler           *server.APIServerHandler
	storage           generic.StorageFactory
	discovery         *discovery.Manager
	openAPI           *crOpenAPI
	minRequestTimeout time.Duration
	metrics           *metrics.Metrics // watch events, deprecated versions' requests; nil: none
	celMetrics        *cel.Metrics     // CEL and ratcheting families; nil: none
	admission         admission.Chain
	logger            *slog.Logger
	serializer        customresource.Serializer
	// metaSchemas returns ObjectMeta's schemas (server-side apply);
	// computed once, on first use.
	metaSchemas func() (map[string]*spec.Schema, error)
	// conversionResolver resolves the services of conversion webhooks.
	conversionResolver conversion.ServiceResolver
	// conversionX509 counts calls to conversion webhooks with deprecated
	// certificates (nil: not counted).
	conversionX509 *x509metrics.Counters

	mu   sync.Mutex
	crds map[string]*crdServing // by CRD name
	// byGroup holds crds by group, then name (setCRDLocked keeps both).
	byGroup map[string]map[string]*crdServing
	// changes counts the changes of crds: a staged change is built
	// against one state of crds, and only shown on it.
	changes int

	// gate holds requests for the resources of CRDs about to be shown
	// (nil: none).
	gate atomic.Pointer[gate]
}

// crdServing is what one established CRD serves.
type crdServing struct {
	uid         types.UID
	crd         *apiextensionsv1.CustomResourceDefinition
	versions    map[string]*versionServing
	terminating atomic.Bool
	// warnings are the deprecation warnings of the deprecated versions,
	// added to every request for them (see deprecationWarnings).
	warnings map[string]string
	// deprecated record the requests for the deprecated versions in
	// apiserver_requested_deprecated_apis (see deprecatedAPI).
	deprecated map[string]*crdDeprecatedAPIs
	// typeConverter and defaulter serve server-side apply on every
	// version.
	typeConverter managedfields.TypeConverter
	defaulter     customresource.Defaulter
	// converter converts between the CRD's versions (strategy None or
	// Webhook).
	converter conversion.Converter
}

// versionServing is one served version: its storage (kept across CRD
// updates while the storage version does not change) and its stores.
type versionServing struct {
	storageVersion string
	storage        storage.Interface
	destroy        func()
	watches        *watchSet
	// selectable are the version's selectable fields, which the
	// storage's attributes function reads; it goes with the storage on
	// reuse.
	selectable *atomic.Pointer[[]customresource.SelectableField]
	// converter is the CRD's current converter, which the storage's
	// codec reads; it goes with the storage on reuse.
	converter *atomic.Pointer[customresource.ConverterHolder]
	store     *crStore
	status    *customresource.StatusStore
	scale     *customresource.ScaleREST // nil without the scale subresource

	// next holds, for a version that reuses a served storage, the schema,
	// selectable fields and converter the storage takes on activation
	// (nil: nothing to hand over).
	next *versionState
}

// versionState is what a reused storage reads from its version (the
// schemas it reads with are the same: see readsAsBefore).
type versionState struct {
	selectable []customresource.SelectableField
	converter  conversion.Converter
}

// commit hands the version's state over to the storage it reuses.
func (v *versionServing) commit() {
	if v.next == nil {
		return
	}
	v.selectable.Store(&v.next.selectable)
	v.converter.Store(&customresource.ConverterHolder{Converter: v.next.converter})
	v.next = nil
}

// closeConverter releases the idle connections of a replaced converter.
func (c *crdServing) closeConverter() {
	if c.converter != nil {
		c.converter.CloseIdleConnections()
	}
}

func (v *versionServing) close() {
	v.watches.close()
	if v.destroy != nil {
		v.destroy()
	}
}

// setCRDLocked makes c what the CRD called name serves (nil: nothing);
// s.mu is held.
func (s *crServer) setCRDLocked(name string, c *crdServing) {
	if old := s.crds[name]; old != nil {
		g := old.crd.Spec.Group
		delete(s.byGroup[g], name)
		if len(s.byGroup[g]) == 0 {
			delete(s.byGroup, g)
		}
		delete(s.crds, name)
	}
	if c == nil {
		return
	}
	if s.crds == nil {
		s.crds = map[string]*crdServing{}
	}
	s.crds[name] = c
	if s.byGroup == nil {
		s.byGroup = map[string]map[string]*crdServing{}
	}
	g := c.crd.Spec.Group
	if s.byGroup[g] == nil {
		s.byGroup[g] = map[string]*crdServing{}
	}
	s.byGroup[g][name] = c
}

// setTerminating refuses creates of the CRD's resources.
func (s *crServer) setTerminating(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.crds[name]; c != nil {
		c.terminating.Store(true)
	}
}

// servesNow tells whether the resource of a request that reached a
// group-version's handler without it is served now: the request was
// routed to that handler just before a change showed the resource (and
// opened the gate await would have held it at), so it is served again
// from the top, once (a redispatched request is not).
func (s *crServer) servesNow(req *http.Request, info *request.RequestInfo) bool {
	if req.Context().Value(redispatchedKey{}) != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.crds[info.Resource+"."+info.APIGroup]
	return c != nil && c.versions[info.APIVersion] != nil
}

// storeFor returns the main store of the storage version of the CRD called
// name, if served (any served version reaches the same objects).
func (s *crServer) storeFor(name string) *crStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.crds[name]
	if c == nil {
		return nil
	}
	if v := c.versions[storageVersion(c.crd)]; v != nil {
		return v.store
	}
	for _, v := range c.versions {
		return v.store
	}
	return nil
}

// closeAll stops serving everything (server destruction).
func (s *crServer) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, c := range s.crds {
		for _, v := range c.versions {
			v.close()
		}
		s.setCRDLocked(name, nil)
	}
}

func servedGroupVersions(c *crdServing) []schema.GroupVersion {
	out := make([]schema.GroupVersion, 0, len(c.versions))
	for v := range c.versions {
		out = append(out, schema.GroupVersion{Group: c.crd.Spec.Group, Version: v})
	}
	return out
}

// buildVersion makes the stores of one served version, on reuse's storage
// if given.
func (s *crServer) buildVersion(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion,
	storageVer string, reuse *versionServing, conv conversion.Converter) (*versionServing, error) {
	names := crd.Status.AcceptedNames
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
	gvk := gv.WithKind(names.Kind)
	listGVK := gv.WithKind(names.ListKind)
	// New objects are what SetGroupVersionKind(gvk) makes of an empty
	// Unstructured (the map {"apiVersion": gv.String(), "kind": kind}), with
	// the strings made and boxed once: every GET and write makes one, and
	// SetGroupVersionKind costs four allocations more (the apiVersion
	// string, its boxing and the kind's, the map's growth).
	apiVersion := any(gv.String())
	kind, listKind := any(gvk.Kind), any(listGVK.Kind)
	newFunc := func() runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	}
	newList := func() runtime.Object {
		return &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": apiVersion, "kind": listKind}}
	}
	resource := schema.GroupResource{Group: crd.Spec.Group, Resource: names.Plural}
	vs := &versionServing{storageVersion: storageVer, watches: newWatchSet(),
		selectable: &atomic.Pointer[[]customresource.SelectableField]{},
		converter:  &atomic.Pointer[customresource.ConverterHolder]{}}
	vs.converter.Store(&customresource.ConverterHolder{Converter: conv})
	selectable := customresource.SelectableFields(v)
	vs.selectable.Store(&selectable)
	if reuse != nil {
		// The served storage keeps reading the served state until this
		// version is activated (commit).
		vs.next = &versionState{selectable: selectable, converter: conv}
		vs.storage, vs.destroy, vs.watches = reuse.storage, reuse.destroy, reuse.watches
		vs.selectable, vs.converter = reuse.selectable, reuse.converter
	} else {
		st, destroy, err := s.storage(generic.StorageConfig{
			Resource:       resource,
			StorageVersion: schema.GroupVersion{Group: crd.Spec.Group, Version: storageVer},
			Prefix:         generic.DefaultResourcePrefix(resource),
			NewFunc:        newFunc,
			NewListFunc:    newList,
			Codec:          customresource.StorageCodec{Storage: schema.GroupVersion{Group: crd.Spec.Group, Version: storageVer}, Served: gv, Schemas: versionSchemas(crd), Converter: vs.converter},
			GetAttrs:       customresource.AttrsFunc(vs.selectable),
		})
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		vs.storage, vs.destroy = st, destroy
	}
	strategy, err := customresource.NewStrategy(crd, v, gvk, s.celMetrics)
	if err != nil {
		vs.closeIfNew(reuse)
		return nil, err
	}
	store := &generic.Store{
		NewFunc:                   newFunc,
		NewListFunc:               newList,
		DefaultQualifiedResource:  resource,
		SingularQualifiedResource: schema.GroupResource{Group: crd.Spec.Group, Resource: names.Singular},
		ResourceShortNames:        names.ShortNames,
		ResourceCategories:        names.Categories,
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		TableConvertor:            customresource.NewTableConvertor(resource, v.AdditionalPrinterColumns),
		GetAttrs:                  customresource.AttrsFunc(vs.selectable),
		FieldLabels:               customresource.LabelNames(selectable),
		StorageVersion:            schema.GroupVersion{Group: crd.Spec.Group, Version: storageVer},
		Storage:                   vs.storage,
		Logger:                    s.logger,
	}
	if err := store.Complete(); err != nil {
		vs.closeIfNew(reuse)
		return nil, err
	}
	vs.store = &crStore{Store: store, watches: vs.watches, schema: strategy.Schema()}
	if strategy.StatusEnabled() {
		vs.status = customresource.NewStatusStore(store, strategy)
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		vs.scale = customresource.NewScaleREST(store, gv, crd, v.Subresources.Scale)
	}
	return vs, nil
}

func (v *versionServing) closeIfNew(reuse *versionServing) {
	if reuse == nil {
		v.close()
	}
}

// selectableFields are the version's selectable fields as it will serve
// them (those it hands over on activation, if any).
func (v *versionServing) selectableFields() []customresource.SelectableField {
	if v.next != nil {
		return v.next.selectable
	}
	if fs := v.selectable.Load(); fs != nil {
		return *fs
	}
	return nil
}

// crPatchTypes are the patch types custom resources accept, their scale
// and status subresources included (strategic merge patch needs Go types:
// 415; server-side apply works on their schemas). As upstream's
// supportedTypes (apiextensions-apiserver
// pkg/apiserver/customresource_handler.go, given to PatchResource for the
// resource, status and scale), without the CBOR apply type kapi does not
// serve.
var crPatchTypes = []string{
	string(types.JSONPatchType),
	string(types.MergePatchType),
	string(types.ApplyYAMLPatchType),
}

// crHandler serves one group-version's custom resources: creates of a
// terminating CRD's resources are refused (405); scale subresources go to their own handler (JSON, YAML and
// protobuf), the rest to the installer's handler. A request for a
// resource about to be served here waits for it (see activation.go).
type crHandler struct {
	next   http.Handler
	scale  http.Handler           // the scale subresources, or nil
	crds   map[string]*crdServing // by plural
	server *crServer
}

func (h *crHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	info, ok := request.RequestInfoFrom(req.Context())
	if ok && info.IsResourceRequest {
		c := h.crds[info.Resource]
		if c == nil && (h.server.await(req, heldResource(info), false) || h.server.servesNow(req, info)) {
			h.server.redispatch(w, req)
			return
		}
		if w := c.warning(info.APIVersion); w != "" {
			warning.AddWarning(req.Context(), w)
		}
		// Recorded once the handler has returned, as upstream's
		// MonitorRequest (not after a panic).
		d := c.deprecatedAPI(info)
		if c != nil && c.terminating.Load() && info.Verb == "create" {
			err := apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Verb)
			err.ErrStatus.Message = fmt.Sprintf("%v not allowed while custom resource definition is terminating", info.Verb)
			handlers.WriteErrorNegotiated(w, req, h.server.serializer, h.server.logger, err)
			return
		}
		if c != nil && info.Subresource == "scale" && h.scale != nil {
			h.scale.ServeHTTP(w, req)
			d.Requested(req.Context())
			return
		}
		h.next.ServeHTTP(w, req)
		d.Requested(req.Context())
		return
	}
	h.next.ServeHTTP(w, req)
}

// warning is the deprecation warning of version, or "" (also for a nil
// c).
func (c *crdServing) warning(version string) string {
	if c == nil {
		return ""
	}
	return c.warnings[version]
}

// versionSchemas are the structural schemas of crd's versions, by name
// (a version without a schema has none): the storage codec prunes what
// it reads against the schema of the version it was stored in, then of
// the version it is served as (see customresource.StorageCodec).
func versionSchemas(crd *apiextensionsv1.CustomResourceDefinition) map[string]*apiextensionsv1.JSONSchemaProps {
	out := make(map[string]*apiextensionsv1.JSONSchemaProps, len(crd.Spec.Versions))
	for i := range crd.Spec.Versions {
		if v := &crd.Spec.Versions[i]; v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			out[v.Name] = v.Schema.OpenAPIV3Schema.DeepCopy()
		}
	}
	return out
}
