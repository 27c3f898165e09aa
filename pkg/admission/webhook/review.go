package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// request is one request's review, built once per webhook call.
type request struct {
	uid     types.UID
	version string // admission.k8s.io version sent
	body    []byte
}

// reviewVersion picks the first version of the webhook's list the server
// speaks (validation makes sure one is there).
func reviewVersion(h *Hook) (string, error) {
	for _, v := range h.ReviewVersions {
		if v == "v1" || v == "v1beta1" {
			return v, nil
		}
	}
	return "", fmt.Errorf("webhook does not accept v1 or v1beta1 AdmissionReview")
}

// objectJSON is an object as the review carries it, with its apiVersion
// and kind, and the same as a map (for CEL).
func objectJSON(obj runtime.Object, a *admission.Attributes) ([]byte, map[string]any, error) {
	if obj == nil {
		return nil, nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, err
	}
	if m["apiVersion"] == nil || m["apiVersion"] == "" {
		m["apiVersion"] = a.Kind.GroupVersion().String()
	}
	if m["kind"] == nil || m["kind"] == "" {
		m["kind"] = a.Kind.Kind
	}
	b, err := json.Marshal(m)
	return b, m, err
}

// optionsJSON is the request's options with their meta.k8s.io/v1 type.
func optionsJSON(opts runtime.Object) []byte {
	if opts == nil {
		return nil
	}
	kind := ""
	switch opts.(type) {
	case *metav1.CreateOptions:
		kind = "CreateOptions"
	case *metav1.UpdateOptions:
		kind = "UpdateOptions"
	case *metav1.DeleteOptions:
		kind = "DeleteOptions"
	default:
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(opts)
	if err != nil {
		return nil
	}
	m["apiVersion"], m["kind"] = "meta.k8s.io/v1", kind
	b, _ := json.Marshal(m)
	return b
}

// reviewInput is what the requests of one admission share.
type reviewInput struct {
	a              *admission.Attributes
	object, old    []byte
	objMap, oldMap map[string]any
	options        []byte
	requestMap     map[string]any // for matchConditions
	userInfo       authenticationv1.UserInfo
	// requestKind and requestResource are the request's own when the
	// objects were converted to an equivalent kind; sent is then the
	// converted object.
	requestKind     *schema.GroupVersionKind
	requestResource *schema.GroupVersionResource
	sent            runtime.Object
}

func newReviewInput(a *admission.Attributes) (*reviewInput, error) {
	in := &reviewInput{a: a, options: optionsJSON(a.Options)}
	var err error
	if in.object, in.objMap, err = objectJSON(a.Object, a); err != nil {
		return nil, err
	}
	if in.old, in.oldMap, err = objectJSON(a.OldObject, a); err != nil {
		return nil, err
	}
	if a.User != nil {
		in.userInfo = authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
		if len(a.User.Extra) > 0 {
			in.userInfo.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range a.User.Extra {
				in.userInfo.Extra[k] = v
			}
		}
	}
	return in, nil
}

// admissionRequest is the request part of the review (shared by v1 and
// v1beta1, whose JSON forms are the same).
func (in *reviewInput) admissionRequest(uid types.UID) *admissionv1.AdmissionRequest {
	a := in.a
	gvk := metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	gvr := metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	reqGVK, reqGVR := gvk, gvr
	if in.requestKind != nil {
		k, r := in.requestKind, in.requestResource
		reqGVK = metav1.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
		reqGVR = metav1.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
	}
	r := &admissionv1.AdmissionRequest{
		UID: uid, Kind: gvk, Resource: gvr, SubResource: a.Subresource,
		RequestKind: &reqGVK, RequestResource: &reqGVR, RequestSubResource: a.Subresource,
		Name: a.Name, Namespace: a.Namespace, Operation: admissionv1.Operation(a.Operation),
		UserInfo: in.userInfo, DryRun: &a.DryRun,
	}
	r.Object.Raw, r.OldObject.Raw, r.Options.Raw = in.object, in.old, in.options
	return r
}

// requestMap is the request as CEL's request variable sees it.
func (in *reviewInput) celRequest() map[string]any {
	if in.requestMap == nil {
		r := in.admissionRequest("")
		r.Object.Raw, r.OldObject.Raw, r.Options.Raw = nil, nil, nil
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
		if err != nil {
			m = map[string]any{}
		}
		in.requestMap = m
	}
	return in.requestMap
}

func (in *reviewInput) build(version string) (*request, error) {
	uid := uuid.NewUUID()
	review := struct {
		APIVersion string                        `json:"apiVersion"`
		Kind       string                        `json:"kind"`
		Request    *admissionv1.AdmissionRequest `json:"request"`
	}{"admission.k8s.io/" + version, "AdmissionReview", in.admissionRequest(uid)}
	b, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	return &request{uid: uid, version: version, body: b}, nil
}

// response is a webhook's answer, checked as upstream checks it.
type response struct {
	allowed          bool
	result           *metav1.Status
	patch            []byte
	warnings         []string
	auditAnnotations map[string]string
}

func parseResponse(req *request, body []byte) (*response, error) {
	var review struct {
		APIVersion string                         `json:"apiVersion"`
		Kind       string                         `json:"kind"`
		Response   *admissionv1.AdmissionResponse `json:"response"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	r := review.Response
	if req.version == "v1" {
		if want := "admission.k8s.io/v1"; review.APIVersion != want || review.Kind != "AdmissionReview" {
			return nil, fmt.Errorf("expected webhook response of %s, Kind=AdmissionReview, got %s, Kind=%s", want, review.APIVersion, review.Kind)
		}
	}
	if r == nil {
		return nil, errors.New("webhook response was absent")
	}
	if req.version == "v1" && r.UID != req.uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", req.uid, r.UID)
	}
	out := &response{allowed: r.Allowed, result: r.Result, patch: r.Patch, warnings: r.Warnings, auditAnnotations: r.AuditAnnotations}
	if len(r.Patch) > 0 {
		switch {
		case r.PatchType == nil && req.version == "v1":
			return nil, errors.New("webhook returned response.patch but not response.patchType")
		case r.PatchType != nil && *r.PatchType != admissionv1.PatchTypeJSONPatch:
			return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", *r.PatchType)
		}
	} else if r.PatchType != nil && req.version == "v1" {
		return nil, errors.New("webhook returned response.patchType but not response.patch")
	}
	out.warnings = slices.DeleteFunc(out.warnings, func(w string) bool { return w == "" })
	return out, nil
}
