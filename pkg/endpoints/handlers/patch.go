package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// maxJSONPatchOperations bounds the operations of one JSON patch.
const maxJSONPatchOperations = 10000

// MaxJSONPatchCopyBytes bounds the bytes the "copy" operations of one JSON
// patch may add, all operations together: kube-apiserver's
// JSONPatchMaxCopyBytes default (3 MiB, k8s.io/apiserver/pkg/server/config.go:
// twice etcd's 1.5 MiB request limit, as a JSON body may shrink when
// stored as protobuf). Past it the patch fails with json-patch's
// AccumulatedCopySizeError, a 422: a short patch whose copies double the
// object cannot grow it without bound.
const MaxJSONPatchCopyBytes = 3 * 1024 * 1024

// json-patch v4 reads its limit from a package variable only; it is set
// once, before any request, as upstream sets it when its server starts
// (only ever lowered, never raised).
func init() {
	if l := jsonpatch.AccumulatedCopySizeLimit; l == 0 || l > MaxJSONPatchCopyBytes {
		jsonpatch.AccumulatedCopySizeLimit = MaxJSONPatchCopyBytes
	}
}

// PatchTypes lists the patch content types served for built-in types, in
// upstream's order, but for server-side apply, which [PatchResource] adds
// when the scope has a FieldManager.
var PatchTypes = []string{
	string(types.JSONPatchType),
	string(types.MergePatchType),
	string(types.StrategicMergePatchType),
}

// ApplyPatchType is the content type of server-side apply. Its CBOR
// variant (application/apply-patch+cbor) is not served: 415.
const ApplyPatchType = string(types.ApplyYAMLPatchType)

// servedPatchTypes is patchTypes (nil: PatchTypes and, with a field
// manager, ApplyPatchType) without apply when there is no field manager.
func (s *RequestScope) servedPatchTypes(patchTypes []string) []string {
	if patchTypes == nil {
		patchTypes = PatchTypes
		if s.FieldManager != nil {
			patchTypes = append(slices.Clip(patchTypes), ApplyPatchType)
		}
	}
	if s.FieldManager == nil && slices.Contains(patchTypes, ApplyPatchType) {
		patchTypes = slices.DeleteFunc(slices.Clone(patchTypes), func(t string) bool { return t == ApplyPatchType })
	}
	return patchTypes
}

// PatchResource serves PATCH of one object with a JSON patch (RFC 6902),
// a JSON merge patch (RFC 7386), a strategic merge patch or a server-side
// apply configuration, chosen by Content-Type (415 listing patchTypes
// otherwise). The patch is applied to the current object inside the
// storage's update, so conflicts retry with the fresh object. A missing
// object is 404, except for apply, which creates it (201). Answers 200
// with the result.
//
// patchTypes nil means PatchTypes, plus ApplyPatchType when the scope has
// a FieldManager; custom resources pass the types without strategic merge
// patch. Apply is never served without a FieldManager.
//
// Apply follows upstream: fieldManager is required and force is allowed
// for apply only (422 PatchOptions invalid otherwise); the body is YAML
// (or JSON) decoded as unstructured (400 `error decoding YAML: ...`);
// its apiVersion and kind must be the served ones and its name the URL's
// (400); conflicts with other managers are 409 unless force=true;
// duplicate keys are a 400 under fieldValidation=Strict and warnings under
// Warn; fields its type does not declare are a 400, but for a storage
// that prunes them (UnknownFieldPruner): they are dropped before the
// merge, and reported per fieldValidation. The patched object of the
// other patch types is pruned so too.
// ServedPatchTypes are the patch content types PatchResource(r, s,
// patchTypes) takes.
func (s *RequestScope) ServedPatchTypes(patchTypes []string) []string {
	return s.servedPatchTypes(patchTypes)
}

func PatchResource(r rest.Patcher, s *RequestScope, patchTypes []string) http.Handler {
	patchTypes = s.servedPatchTypes(patchTypes)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, ns, err := s.requestInfo(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		// The Content-Type first, then the name, as upstream's
		// PatchResource.
		ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
		ct = strings.TrimSpace(ct)
		if !contains(patchTypes, ct) {
			s.err(newUnsupportedMediaType(patchTypes), w, req)
			return
		}
		if info.Name == "" {
			s.err(errEmptyName, w, req)
			return
		}
		patchType := types.PatchType(ct)
		o, err := s.negotiate(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		body, err := s.readBody(req, metrics.BodyPatch)
		if err != nil {
			s.err(err, w, req)
			return
		}
		audit.LogRequestPatch(req.Context(), body)
		opts := &metav1.PatchOptions{}
		if err := s.decodeParameters(req, opts); err != nil {
			s.err(err, w, req)
			return
		}
		if errs := validation.ValidatePatchOptions(opts, patchType); len(errs) > 0 {
			s.err(invalidOptions("PatchOptions", "", errs), w, req)
			return
		}
		opts.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PatchOptions"))

		p := &patcher{
			scope:     s,
			newObj:    r.New,
			patchType: patchType,
			patch:     body,
			name:      info.Name,
			namespace: ns,
			directive: fieldValidation(opts.FieldValidation),
			manager:   managerOrUserAgent(opts.FieldManager, req),
			force:     opts.Force != nil && *opts.Force,
		}
		updateOpts := &metav1.UpdateOptions{
			DryRun:          opts.DryRun,
			FieldManager:    opts.FieldManager,
			FieldValidation: opts.FieldValidation,
		}
		updateOpts.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("UpdateOptions"))
		uctx, createValidation, updateValidation := s.updateValidation(ctx, info.Name, updateOpts)
		// Apply creates a missing object, whatever the strategy says about
		// create-on-update.
		forceAllowCreate := patchType == types.ApplyYAMLPatchType
		result, created, err := r.Update(uctx, info.Name, s.admitUpdate(p, info.Name, updateOpts), createValidation, updateValidation, forceAllowCreate, updateOpts)
		if err != nil {
			s.err(err, w, req)
			return
		}
		code := http.StatusOK
		if created {
			code = http.StatusCreated
		}
		s.writeResponse(ctx, w, req, code, o, result)
	})
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// patcher is the UpdatedObjectInfo of a PATCH: it applies the patch to
// whatever object is current when the storage asks.
type patcher struct {
	scope     *RequestScope
	newObj    func() runtime.Object
	patchType types.PatchType
	patch     []byte
	name      string
	namespace string
	directive string
	manager   string
	force     bool
}

func (p *patcher) Preconditions() *metav1.Preconditions { return nil }

// UpdatedObject patches current, the stored object, or an empty one (no
// uid) when none exists: only apply may create, as upstream.
func (p *patcher) UpdatedObject(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	// Each attempt of the storage's update starts here: a request whose
	// deadline passed (its 504 already sent) does no more work.
	if err := deadlineExceeded(ctx); err != nil {
		return nil, err
	}
	// Applying the patch works on the client's input: a panic in it is a
	// 400 (guard).
	var obj runtime.Object
	err := guard(p.scope.logger(), "applying the patch", func() (err error) {
		obj, err = p.updatedObject(ctx, current)
		return err
	})
	return obj, err
}

func (p *patcher) updatedObject(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	exists := current != nil && hasUID(current)
	if !exists && p.patchType != types.ApplyYAMLPatchType {
		return nil, apierrors.NewNotFound(p.scope.Resource.GroupResource(), p.name)
	}
	if !exists {
		current = p.newObj()
	}
	var (
		obj runtime.Object
		err error
	)
	switch p.patchType {
	case types.JSONPatchType, types.MergePatchType:
		obj, err = p.applyJSON(ctx, current)
	case types.StrategicMergePatchType:
		obj, err = p.applyStrategic(ctx, current)
	case types.ApplyYAMLPatchType:
		obj, err = p.applyServerSide(ctx, current)
	default:
		return nil, fmt.Errorf("unknown Content-Type header for patch: %v", p.patchType)
	}
	if err != nil {
		return nil, err
	}
	if p.patchType == types.StrategicMergePatchType {
		// (applyJSON reports the fields it prunes with the patch's
		// other strict decoding errors; applyServerSide prunes the
		// applied configuration itself.)
		if err := p.scope.pruneUnknownFields(ctx, obj, p.directive); err != nil {
			return nil, err
		}
	}
	if !exists && hasUID(obj) {
		m, _ := meta.Accessor(obj)
		return nil, apierrors.NewConflict(p.scope.Resource.GroupResource(), p.name,
			fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", m.GetUID()))
	}
	if m, err := meta.Accessor(obj); err == nil {
		if !exists {
			wipeObjectMetaSystemFields(m)
		}
		if err := ensureNamespace(p.scope.expectedNamespace(p.namespace), m); err != nil {
			return nil, err
		}
	}
	if err := checkName(obj, p.name, p.namespace); err != nil {
		return nil, err
	}
	if p.scope.FieldManager != nil && p.patchType != types.ApplyYAMLPatchType {
		obj = p.scope.FieldManager.UpdateNoErrors(current, obj, p.manager)
	}
	return obj, nil
}

// hasUID tells whether obj is a stored object (not the empty one the
// storage hands over when there is none).
func hasUID(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetUID() != ""
}

// applyServerSide merges the applied configuration into current with the
// field manager. Duplicate keys are checked after the merge, as upstream.
func (p *patcher) applyServerSide(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	applied := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(p.patch, &applied.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	// The field manager merges only declared fields: undeclared ones go
	// first (reported per fieldValidation), so the applier owns what is
	// stored.
	if errs := p.scope.prunedFields(applied); len(errs) > 0 {
		// Deliberately not upstream's answer, a 500 ("failed to create
		// typed patch object ...: .spec.x: field not declared in
		// schema", kube-apiserver v1.37.2): bad input gets a 400.
		switch fieldValidation(p.directive) {
		case metav1.FieldValidationStrict:
			return nil, apierrors.NewBadRequest(runtime.NewStrictDecodingError(errs).Error())
		case metav1.FieldValidationWarn:
			addWarnings(ctx, errs)
		}
	}
	obj, err := p.scope.FieldManager.Apply(current, applied, p.manager, p.force)
	if err != nil {
		return nil, err
	}
	if err := p.scope.checkConversion(obj); err != nil {
		// Deliberately a 400 where kube-apiserver v1.37.2 answers a 500
		// with this message (applyPatcher's conversion of the result to
		// its internal version): bad input gets a 400.
		return nil, apierrors.NewBadRequest(fmt.Sprintf("failed to convert to unversioned (%s/%s; %s): %v",
			applied.GetNamespace(), applied.GetName(), applied.GroupVersionKind(), err))
	}
	if p.strict() {
		if err := yaml.UnmarshalStrict(p.patch, &map[string]any{}); err != nil {
			if p.directive == metav1.FieldValidationStrict {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
			}
			addWarnings(ctx, []error{err})
		}
	}
	return obj, nil
}

func (p *patcher) strict() bool {
	return p.directive == metav1.FieldValidationWarn || p.directive == metav1.FieldValidationStrict
}

// jsonCodec encodes and decodes the resource's objects as JSON.
func (p *patcher) jsonCodec(strict bool) (runtime.Encoder, runtime.Decoder, error) {
	info, ok := runtime.SerializerInfoForMediaType(p.scope.Serializer.SupportedMediaTypes(), mediaTypeJSON)
	if !ok {
		return nil, nil, errors.New("no JSON serializer")
	}
	dec := info.Serializer
	if strict && info.StrictSerializer != nil {
		dec = info.StrictSerializer
	}
	gv := p.scope.Kind.GroupVersion()
	return p.scope.Serializer.EncoderForVersion(info.Serializer, gv), p.scope.Serializer.DecoderToVersion(dec, gv), nil
}

type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// applyJSON applies a JSON patch or a JSON merge patch to the JSON form of
// current. The patched document is bounded twice before anything decodes
// it: the copies of a JSON patch by MaxJSONPatchCopyBytes (422), the whole
// document by the request body limit (413: no PUT could carry it either).
func (p *patcher) applyJSON(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	enc, dec, err := p.jsonCodec(p.strict())
	if err != nil {
		return nil, err
	}
	currentJS, err := runtime.Encode(enc, current)
	if err != nil {
		return nil, err
	}
	var strictErrs []error
	var patched []byte
	if p.patchType == types.JSONPatchType {
		if p.strict() {
			var ops []jsonPatchOp
			if strictErrs, err = kjson.UnmarshalStrict(p.patch, &ops); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for i, e := range strictErrs {
				strictErrs[i] = fmt.Errorf("json patch %v", e)
			}
		}
		ops, err := jsonpatch.DecodePatch(p.patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if len(ops) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
		}
		if patched, err = ops.Apply(currentJS); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	} else {
		if p.strict() {
			v := map[string]any{}
			if strictErrs, err = kjson.UnmarshalStrict(p.patch, &v); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		if patched, err = jsonpatch.MergePatch(currentJS, p.patch); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	if limit := p.scope.maxBodyBytes(); int64(len(patched)) > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the patched object is %d bytes, limit is %d", len(patched), limit))
	}
	if err := deadlineExceeded(ctx); err != nil {
		return nil, err
	}

	obj := p.newObj()
	if err := runtime.DecodeInto(dec, patched, obj); err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), string(patched), err.Error()),
			})
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	} else if err := p.scope.checkConversion(obj); err != nil {
		// Upstream decodes the patched document into its internal
		// version: the same 422 as any other undecodable result.
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), string(patched), err.Error()),
		})
	}
	// The fields the scope prunes (custom resources) are strict decoding
	// errors of the patched object, as upstream's decoder reports them:
	// under Strict, a 422 on the patch showing the patched object.
	strictErrs = append(strictErrs, p.scope.prunedFields(obj)...)
	if err := p.reportStrict(ctx, strictErrs, string(patched)); err != nil {
		return nil, err
	}
	p.scope.defaultDecoded(obj)
	return obj, nil
}

// reportStrict turns strict decoding problems into warnings (Warn) or a
// 422 (Strict).
func (p *patcher) reportStrict(ctx context.Context, strictErrs []error, shown string) error {
	if len(strictErrs) == 0 {
		return nil
	}
	if p.directive == metav1.FieldValidationWarn {
		addWarnings(ctx, strictErrs)
		return nil
	}
	if p.directive == metav1.FieldValidationIgnore {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), shown, runtime.NewStrictDecodingError(strictErrs).Error()),
	})
}

func (p *patcher) applyStrategic(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	versioned, err := p.scope.Convertor.ConvertToVersion(current, p.scope.Kind.GroupVersion())
	if err != nil {
		return nil, err
	}
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
	if err != nil {
		return nil, err
	}
	patchMap := map[string]any{}
	var strictErrs []error
	if p.strict() {
		if strictErrs, err = kjson.UnmarshalStrict(p.patch, &patchMap); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(p.patch, &patchMap); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	schemaRef := p.newObj()
	patched, err := strategicpatch.StrategicMergeMapPatch(original, patchMap, schemaRef)
	if err != nil {
		return nil, interpretStrategicMergePatchError(err)
	}
	obj := p.newObj()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, obj, p.strict()); err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), fmt.Sprintf("%+v", patchMap), err.Error()),
			})
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	if err := p.reportStrict(ctx, strictErrs, fmt.Sprintf("%+v", patchMap)); err != nil {
		return nil, err
	}
	// Decoding the patched object would have defaulted it (as the other
	// patch types do): default it here, as upstream does.
	if p.scope.Defaulter != nil {
		p.scope.Defaulter.Default(obj)
	}
	if err := p.scope.checkConversion(obj); err != nil {
		// Deliberately a 400: kube-apiserver v1.37.2 answers its
		// conversion's bare error as a 500 here (smpPatcher returns it
		// unwrapped); bad input gets a 400, with the same message.
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return obj, nil
}

// interpretStrategicMergePatchError maps strategic merge patch errors to
// 400 or 422 as upstream does.
func interpretStrategicMergePatchError(err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrBadJSONDoc), errors.Is(err, mergepatch.ErrBadPatchFormatForPrimitiveList),
		errors.Is(err, mergepatch.ErrBadPatchFormatForRetainKeys), errors.Is(err, mergepatch.ErrBadPatchFormatForSetElementOrderList),
		errors.Is(err, mergepatch.ErrUnsupportedStrategicMergePatchFormat):
		return apierrors.NewBadRequest(err.Error())
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return err
	}
	return apierrors.NewBadRequest(err.Error())
}
