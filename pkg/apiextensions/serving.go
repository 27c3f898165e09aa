package apiextensions

import (
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/installer"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/metrics"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// crServer installs and removes the routes, discovery and OpenAPI
// documents of established CRDs. Several CRDs of one group-version share
// its REST root: every change rebuilds the group-version's handler and
// replaces it. Methods are called by the controller's single worker (and
// by tests); mu also guards reads by request handlers.
type crServer struct {
	handler           *server.APIServerHandler
	storage           generic.StorageFactory
	discovery         *discovery.Manager
	openAPI           *crOpenAPI
	minRequestTimeout time.Duration
	metrics           *metrics.Metrics // watch events; nil: none
	logger            *slog.Logger
	serializer        customresource.Serializer
	// metaSchemas returns ObjectMeta's schemas (server-side apply);
	// computed once, on first use.
	metaSchemas func() (map[string]*spec.Schema, error)
	// conversionResolver resolves the services of conversion webhooks.
	conversionResolver conversion.ServiceResolver

	mu   sync.Mutex
	crds map[string]*crdServing // by CRD name
}

// crdServing is what one established CRD serves.
type crdServing struct {
	uid         types.UID
	crd         *apiextensionsv1.CustomResourceDefinition
	versions    map[string]*versionServing
	terminating atomic.Bool
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
	// readSchema is the schema whose defaults reads from storage get; it
	// goes with the storage on reuse.
	readSchema *atomic.Pointer[apiextensionsv1.JSONSchemaProps]
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

// serve installs (or refreshes) what crd serves. crd must be established.
func (s *crServer) serve(crd *apiextensionsv1.CustomResourceDefinition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.crds[crd.Name]
	if old != nil && old.uid != crd.UID {
		s.removeLocked(crd.Name)
		old = nil
	}
	next := &crdServing{uid: crd.UID, crd: crd.DeepCopy(), versions: map[string]*versionServing{}, defaulter: customresource.NewDefaulter(crd)}
	meta, err := s.metaSchemas()
	if err != nil {
		return fmt.Errorf("serve %s: %w", crd.Name, err)
	}
	next.typeConverter = customresource.NewTypeConverter(crd, meta, s.logger)
	if next.converter, err = conversion.New(crd, conversion.Options{ServiceResolver: s.conversionResolver, Logger: s.logger}); err != nil {
		// As upstream: a CRD whose converter cannot be built is not
		// served (the controller retries and logs why).
		return fmt.Errorf("serve %s: conversion: %w", crd.Name, err)
	}
	next.terminating.Store(crd.DeletionTimestamp != nil)
	sv := storageVersion(crd)
	var built []*versionServing
	fail := func(err error) error {
		for _, v := range built {
			v.close()
		}
		return err
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		var reuse *versionServing
		if old != nil {
			if o := old.versions[v.Name]; o != nil && o.storageVersion == sv {
				reuse = o
			}
		}
		vs, err := s.buildVersion(crd, v, sv, reuse, next.converter)
		if err != nil {
			return fail(fmt.Errorf("serve %s %s: %w", crd.Name, v.Name, err))
		}
		if reuse == nil {
			built = append(built, vs)
		}
		next.versions[v.Name] = vs
	}
	s.crds[crd.Name] = next
	gvs := servedGroupVersions(next)
	if old != nil {
		// Storages no longer used go (their watches end).
		for name, o := range old.versions {
			if n := next.versions[name]; n == nil || n.storage != o.storage {
				o.close()
			}
		}
		gvs = append(gvs, servedGroupVersions(old)...)
		old.closeConverter()
	}
	return s.rebuildLocked(gvs)
}

// remove stops serving the CRD called name (its watches end).
func (s *crServer) remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removeLocked(name)
}

func (s *crServer) removeLocked(name string) error {
	old := s.crds[name]
	if old == nil {
		return nil
	}
	delete(s.crds, name)
	err := s.rebuildLocked(servedGroupVersions(old))
	for _, v := range old.versions {
		v.close()
	}
	old.closeConverter()
	return err
}

// setTerminating refuses creates of the CRD's resources.
func (s *crServer) setTerminating(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.crds[name]; c != nil {
		c.terminating.Store(true)
	}
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
		delete(s.crds, name)
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
	newFunc := func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	newList := func() runtime.Object {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(listGVK)
		return u
	}
	resource := schema.GroupResource{Group: crd.Spec.Group, Resource: names.Plural}
	vs := &versionServing{storageVersion: storageVer, watches: newWatchSet(),
		readSchema: &atomic.Pointer[apiextensionsv1.JSONSchemaProps]{}, selectable: &atomic.Pointer[[]customresource.SelectableField]{},
		converter: &atomic.Pointer[customresource.ConverterHolder]{}}
	vs.converter.Store(&customresource.ConverterHolder{Converter: conv})
	if v.Schema != nil {
		vs.readSchema.Store(v.Schema.OpenAPIV3Schema)
	}
	selectable := customresource.SelectableFields(v)
	vs.selectable.Store(&selectable)
	if reuse != nil {
		vs.storage, vs.destroy, vs.watches = reuse.storage, reuse.destroy, reuse.watches
		reuse.readSchema.Store(vs.readSchema.Load())
		vs.readSchema = reuse.readSchema
		reuse.selectable.Store(vs.selectable.Load())
		vs.selectable = reuse.selectable
		reuse.converter.Store(vs.converter.Load())
		vs.converter = reuse.converter
	} else {
		st, destroy, err := s.storage(generic.StorageConfig{
			Resource:       resource,
			StorageVersion: schema.GroupVersion{Group: crd.Spec.Group, Version: storageVer},
			Prefix:         generic.DefaultResourcePrefix(resource),
			NewFunc:        newFunc,
			NewListFunc:    newList,
			Codec:          customresource.StorageCodec{Storage: schema.GroupVersion{Group: crd.Spec.Group, Version: storageVer}, Served: gv, Defaults: vs.readSchema, Converter: vs.converter},
			GetAttrs:       customresource.AttrsFunc(vs.selectable),
		})
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		vs.storage, vs.destroy = st, destroy
	}
	strategy, err := customresource.NewStrategy(crd, v, gvk)
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

// rebuildLocked rebuilds and replaces the handler, discovery and OpenAPI
// document of each group-version (removing those nothing serves).
func (s *crServer) rebuildLocked(gvs []schema.GroupVersion) error {
	seen := map[schema.GroupVersion]bool{}
	var errs []error
	for _, gv := range gvs {
		if seen[gv] {
			continue
		}
		seen[gv] = true
		if err := s.rebuildGroupVersionLocked(gv); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("rebuild routes: %v", errs)
	}
	return nil
}

func (s *crServer) rebuildGroupVersionLocked(gv schema.GroupVersion) error {
	root := "/apis/" + gv.Group + "/" + gv.Version
	stores := map[string]rest.Storage{}
	scales := map[string]rest.Storage{}
	byResource := map[string]*crdServing{}
	byKind := map[schema.GroupVersionKind]customresource.FieldManagement{}
	convertor := customresource.Convertor{Kinds: map[schema.GroupVersionKind]customresource.KindLabels{}}
	var served []*crdServing
	for _, c := range s.crds {
		if c.crd.Spec.Group != gv.Group {
			continue
		}
		v := c.versions[gv.Version]
		if v == nil {
			continue
		}
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
		byKind[gv.WithKind(c.crd.Status.AcceptedNames.Kind)] = customresource.FieldManagement{TypeConverter: c.typeConverter, Defaulter: c.defaulter, Converter: c.converter}
		var labels []string
		if fs := v.selectable.Load(); fs != nil {
			labels = customresource.LabelNames(*fs)
		}
		convertor.Kinds[gv.WithKind(c.crd.Status.AcceptedNames.Kind)] = customresource.KindLabels{
			Namespaced: c.crd.Spec.Scope == apiextensionsv1.NamespaceScoped, Fields: labels,
		}
		served = append(served, c)
	}
	if len(stores) == 0 {
		s.handler.UnregisterREST(root)
		s.discovery.RemoveGroupVersion(gv)
		s.openAPI.remove(gv)
		return nil
	}
	g := &installer.APIGroupVersion{
		GroupVersion:      gv,
		Storage:           stores,
		Serializer:        s.serializer,
		Convertor:         convertor,
		FieldManagers:     customresource.FieldManagers(byKind),
		MinRequestTimeout: s.minRequestTimeout,
		Metrics:           s.metrics,
		Logger:            s.logger,
	}
	h, resources, err := g.Build()
	if err != nil {
		return fmt.Errorf("build %s: %w", gv, err)
	}
	var scaleHandler http.Handler
	if len(scales) > 0 {
		// Scale is a built-in type: served in protobuf too, as upstream.
		sg := *g
		sg.Storage, sg.Serializer, sg.Convertor = scales, nil, nil
		if scaleHandler, _, err = sg.Build(); err != nil {
			return fmt.Errorf("build the scale subresources of %s: %w", gv, err)
		}
	}
	s.handler.HandleREST(root, &crHandler{next: h, scale: scaleHandler, crds: byResource, serializer: s.serializer, logger: s.logger})
	if err := s.discovery.AddGroupVersion(gv, resources, discovery.WithPriority(discovery.CRDPriority), discovery.WithResponseKindGroupVersion()); err != nil {
		return fmt.Errorf("discovery for %s: %w", gv, err)
	}
	sort.Slice(served, func(i, j int) bool { return served[i].crd.Name < served[j].crd.Name })
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(served))
	for i, c := range served {
		crds[i] = c.crd
	}
	s.openAPI.set(gv, crds)
	return nil
}

// crPatchTypes are the patch types custom resources accept (strategic
// merge patch needs Go types: 415, as upstream; server-side apply works
// on their schemas).
var crPatchTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}

// crHandler serves one group-version's custom resources: creates of a
// terminating CRD's resources are refused (405), strategic merge patches
// answer 415; scale subresources go to their own handler (JSON, YAML and
// protobuf), the rest to the installer's handler.
type crHandler struct {
	next       http.Handler
	scale      http.Handler           // the scale subresources, or nil
	crds       map[string]*crdServing // by plural
	serializer customresource.Serializer
	logger     *slog.Logger
}

func (h *crHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	info, ok := request.RequestInfoFrom(req.Context())
	if ok && info.IsResourceRequest {
		c := h.crds[info.Resource]
		if c != nil && c.terminating.Load() && info.Verb == "create" {
			err := apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Verb)
			err.ErrStatus.Message = fmt.Sprintf("%v not allowed while custom resource definition is terminating", info.Verb)
			handlers.WriteErrorNegotiated(w, req, h.serializer, h.logger, err)
			return
		}
		if c != nil && info.Verb == "patch" {
			ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
			if strings.TrimSpace(ct) == "application/strategic-merge-patch+json" {
				handlers.WriteErrorNegotiated(w, req, h.serializer, h.logger, &apierrors.StatusError{ErrStatus: unsupportedPatch()})
				return
			}
		}
		if c != nil && info.Subresource == "scale" && h.scale != nil {
			h.scale.ServeHTTP(w, req)
			return
		}
	}
	h.next.ServeHTTP(w, req)
}

// unsupportedPatch is the 415 of a patch type custom resources do not take.
func unsupportedPatch() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(crPatchTypes, ", "),
	}
}
