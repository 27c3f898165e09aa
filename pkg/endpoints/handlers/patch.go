package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// maxJSONPatchOperations bounds the operations of one JSON patch.
const maxJSONPatchOperations = 10000

// PatchTypes lists the patch content types served for built-in types, in
// upstream's order. Server-side apply (application/apply-patch+yaml) is
// not served yet: it answers 415 like any other unknown type.
var PatchTypes = []string{
	string(types.JSONPatchType),
	string(types.MergePatchType),
	string(types.StrategicMergePatchType),
}

// PatchResource serves PATCH of one object with a JSON patch (RFC 6902),
// a JSON merge patch (RFC 7386) or a strategic merge patch, chosen by
// Content-Type (415 listing patchTypes otherwise). The patch is applied to
// the current object inside the storage's update, so conflicts retry with
// the fresh object; a missing object is 404. Answers 200 with the result.
// patchTypes nil means PatchTypes; custom resources pass the types without
// strategic merge patch.
func PatchResource(r rest.Patcher, s *RequestScope, patchTypes []string) http.Handler {
	if patchTypes == nil {
		patchTypes = PatchTypes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, ns, err := s.requestInfo(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if info.Name == "" {
			s.err(errEmptyName, w, req)
			return
		}
		ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
		ct = strings.TrimSpace(ct)
		if !contains(patchTypes, ct) {
			s.err(newUnsupportedMediaType(patchTypes), w, req)
			return
		}
		patchType := types.PatchType(ct)
		o, err := s.negotiate(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		body, err := s.readBody(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
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
		}
		updateOpts := &metav1.UpdateOptions{
			DryRun:          opts.DryRun,
			FieldManager:    opts.FieldManager,
			FieldValidation: opts.FieldValidation,
		}
		updateOpts.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("UpdateOptions"))
		createValidation, updateValidation := s.updateValidation(req, info.Name, opts.DryRun)
		result, created, err := r.Update(ctx, info.Name, p, createValidation, updateValidation, false, updateOpts)
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

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
}

func (p *patcher) Preconditions() *metav1.Preconditions { return nil }

func (p *patcher) UpdatedObject(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	if current == nil {
		return nil, apierrors.NewNotFound(p.scope.Resource.GroupResource(), p.name)
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
	default:
		return nil, fmt.Errorf("unknown Content-Type header for patch: %v", p.patchType)
	}
	if err != nil {
		return nil, err
	}
	if err := checkName(obj, p.name, p.namespace); err != nil {
		return nil, err
	}
	if p.scope.FieldManager != nil {
		obj = p.scope.FieldManager.Update(ctx, current, obj, p.manager)
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

	obj := p.newObj()
	if err := runtime.DecodeInto(dec, patched, obj); err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), string(patched), err.Error()),
			})
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	if err := p.reportStrict(ctx, strictErrs, string(patched)); err != nil {
		return nil, err
	}
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
