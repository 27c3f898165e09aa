package conversion

import (
	"encoding/json"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"
)

// The ConversionReview versions kapi speaks, as kube-apiserver.
var (
	reviewV1      = apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview")
	reviewV1beta1 = apiextensionsv1beta1.SchemeGroupVersion.WithKind("ConversionReview")
)

// errNoReviewVersion is upstream's error when a CRD lists no
// ConversionReview version kapi supports.
var errNoReviewVersion = errors.New("no supported conversion review versions")

// pickReviewVersion returns the first of versions kapi supports.
func pickReviewVersion(versions []string) (schema.GroupVersionKind, error) {
	for _, v := range versions {
		switch v {
		case reviewV1.Version:
			return reviewV1, nil
		case reviewV1beta1.Version:
			return reviewV1beta1, nil
		}
	}
	return schema.GroupVersionKind{}, errNoReviewVersion
}

// encodeRequest returns the JSON ConversionReview (of version review) that
// asks to convert objs to desired. Like upstream, it carries an empty
// response.
func encodeRequest(review schema.GroupVersionKind, uid types.UID, desired string, objs []*unstructured.Unstructured) ([]byte, error) {
	raws := make([]runtime.RawExtension, len(objs))
	for i, o := range objs {
		b, err := o.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode object at index %d: %w", i, err)
		}
		raws[i] = runtime.RawExtension{Raw: b}
	}
	tm := metav1.TypeMeta{APIVersion: review.GroupVersion().String(), Kind: review.Kind}
	var v any
	switch review {
	case reviewV1:
		v = &apiextensionsv1.ConversionReview{
			TypeMeta: tm,
			Request:  &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: raws},
			Response: &apiextensionsv1.ConversionResponse{},
		}
	case reviewV1beta1:
		v = &apiextensionsv1beta1.ConversionReview{
			TypeMeta: tm,
			Request:  &apiextensionsv1beta1.ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: raws},
			Response: &apiextensionsv1beta1.ConversionResponse{},
		}
	default:
		return nil, fmt.Errorf("unsupported conversion review %v", review)
	}
	return json.Marshal(v)
}

// decodeResponse decodes and checks a webhook's answer to a request of
// version review with uid, and returns its converted objects (not checked
// yet). Its errors are upstream's.
func decodeResponse(review schema.GroupVersionKind, uid types.UID, body []byte) ([]runtime.RawExtension, error) {
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &tm); err != nil {
		return nil, fmt.Errorf("decode webhook response: %w", err)
	}
	got := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	switch review {
	case reviewV1:
		// Checked to make sure the answer is what was asked for.
		if got != reviewV1 {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", reviewV1, got)
		}
		var r apiextensionsv1.ConversionReview
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &r); err != nil {
			return nil, fmt.Errorf("decode webhook response: %w", err)
		}
		if r.Response == nil {
			return nil, errors.New("no response provided")
		}
		if r.Response.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
		}
		if err := resultError(r.Response.Result); err != nil {
			return nil, err
		}
		return r.Response.ConvertedObjects, nil
	case reviewV1beta1:
		// Upstream checks neither the kind nor the uid of v1beta1
		// answers: a missing apiVersion or kind is taken to be the one
		// asked for; another kind fails to decode.
		if tm.APIVersion == "" {
			got.Group, got.Version = reviewV1beta1.Group, reviewV1beta1.Version
		}
		if tm.Kind == "" {
			got.Kind = reviewV1beta1.Kind
		}
		if got != reviewV1beta1 {
			return nil, fmt.Errorf("decode webhook response: expected %v, got %v", reviewV1beta1, got)
		}
		var r apiextensionsv1beta1.ConversionReview
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &r); err != nil {
			return nil, fmt.Errorf("decode webhook response: %w", err)
		}
		if r.Response == nil {
			return nil, errors.New("no response provided")
		}
		if err := resultError(r.Response.Result); err != nil {
			return nil, err
		}
		return r.Response.ConvertedObjects, nil
	}
	return nil, fmt.Errorf("unsupported conversion review %v", review)
}

// resultError returns the webhook's failure, if result is not a success.
func resultError(result metav1.Status) error {
	if result.Status == metav1.StatusSuccess {
		return nil
	}
	if result.Message != "" {
		return errors.New(result.Message)
	}
	return fmt.Errorf("response.result.status was '%s', not 'Success'", result.Status)
}

// rawObject decodes one converted object.
func rawObject(raw []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return u, nil
}
