package conversion

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// webhookConverter is strategy Webhook.
type webhookConverter struct {
	crd    string
	client *hookClient
	// review is the ConversionReview version to send; reviewErr is set
	// instead when the CRD lists none kapi supports (upstream fails at
	// conversion time, so conversions that need no call still work).
	review    schema.GroupVersionKind
	reviewErr error
	logger    *slog.Logger
}

func newWebhookConverter(crd *apiextensionsv1.CustomResourceDefinition, opts Options) (*webhookConverter, error) {
	name := "conversion_webhook_for_" + crd.Name
	conv := crd.Spec.Conversion
	if conv.Webhook == nil {
		return nil, fmt.Errorf("CRD %s: conversion strategy Webhook without spec.conversion.webhook", crd.Name)
	}
	client, err := newHookClient(name, conv.Webhook.ClientConfig, opts)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	review, reviewErr := pickReviewVersion(conv.Webhook.ConversionReviewVersions)
	return &webhookConverter{
		crd:       crd.Name,
		client:    client,
		review:    review,
		reviewErr: reviewErr,
		logger:    opts.Logger.With("crd", crd.Name),
	}, nil
}

func (w *webhookConverter) closeIdleConnections() { w.client.closeIdleConnections() }

func (w *webhookConverter) convert(ctx context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion, listGVK schema.GroupVersionKind, single bool) ([]*unstructured.Unstructured, error) {
	desired := to.String()
	out := make([]*unstructured.Unstructured, len(objs))
	var sent []*unstructured.Unstructured
	var at []int // index in objs of each sent object
	for i, o := range objs {
		switch {
		case o.GetAPIVersion() == desired:
			out[i] = o
		case isEmptyObject(o):
			// Upstream converts objects with only apiVersion and kind
			// (the watch cache's probe) without calling the webhook.
			out[i] = withAPIVersion(o, desired)
		default:
			sent = append(sent, o)
			at = append(at, i)
		}
	}
	if len(sent) == 0 {
		return out, nil
	}
	if w.reviewErr != nil {
		return nil, newError(w.reviewErr, "%s", w.reviewErr.Error())
	}
	gvk := listGVK
	if single {
		gvk = sent[0].GroupVersionKind()
	}

	uid := types.UID(uuid.NewString())
	start := time.Now()
	converted, err := w.call(ctx, uid, sent, to, gvk, single)
	if err != nil {
		w.logger.DebugContext(ctx, "conversion webhook failed",
			"uid", uid, "desiredAPIVersion", desired, "objects", len(sent),
			"duration", time.Since(start), "err", err)
		return nil, err
	}
	w.logger.DebugContext(ctx, "conversion webhook succeeded",
		"uid", uid, "desiredAPIVersion", desired, "objects", len(sent),
		"duration", time.Since(start))
	for j, i := range at {
		out[i] = converted[j]
	}
	return out, nil
}

// call sends sent in one ConversionReview and returns the checked
// conversions. gvk names the input in errors.
func (w *webhookConverter) call(ctx context.Context, uid types.UID, sent []*unstructured.Unstructured, to schema.GroupVersion, gvk schema.GroupVersionKind, single bool) ([]*unstructured.Unstructured, error) {
	body, err := encodeRequest(w.review, uid, to.String(), sent)
	if err != nil {
		return nil, newError(err, "conversion webhook for %v failed: %v", gvk, err)
	}
	resp, err := w.client.post(ctx, body)
	if err != nil {
		return nil, newError(err, "conversion webhook for %v failed: %v", gvk, err)
	}
	return applyResponse(w.review, uid, resp, sent, to, gvk, single)
}

// applyResponse decodes and checks a webhook's answer to the request of
// version review, uid, for sent, and returns the converted objects (with
// the metadata restored). Every error is an *Error with upstream's text.
func applyResponse(review schema.GroupVersionKind, uid types.UID, body []byte, sent []*unstructured.Unstructured, to schema.GroupVersion, gvk schema.GroupVersionKind, single bool) ([]*unstructured.Unstructured, error) {
	raws, err := decodeResponse(review, uid, body)
	if err != nil {
		return nil, newError(err, "conversion webhook for %v failed: %v", gvk, err)
	}
	if len(raws) != len(sent) {
		return nil, newError(nil, "conversion webhook for %v returned %d objects, expected %d", gvk, len(raws), len(sent))
	}
	out := make([]*unstructured.Unstructured, len(sent))
	for i, original := range sent {
		c, err := checkConverted(raws[i].Raw, original, to)
		if err != nil {
			return nil, wordItemError(err, gvk, i, single)
		}
		out[i] = c
	}
	return out, nil
}

// itemError is a failure of one converted object; kind selects upstream's
// wording.
type itemError struct {
	kind itemErrorKind
	err  error
}

type itemErrorKind int

const (
	itemDecode   itemErrorKind = iota // not an object
	itemVersion                       // wrong group/version or kind
	itemIdentity                      // kind, name, namespace or uid changed
	itemMeta                          // invalid labels or annotations
)

func (e *itemError) Error() string { return e.err.Error() }
func (e *itemError) Unwrap() error { return e.err }

// checkConverted decodes one converted object and checks it against its
// original.
func checkConverted(raw []byte, original *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error) {
	c, err := rawObject(raw)
	if err != nil {
		return nil, &itemError{itemDecode, err}
	}
	if got := c.GroupVersionKind().GroupVersion(); got != to {
		return nil, &itemError{itemVersion, fmt.Errorf("invalid groupVersion (expected %v, received %v)", to, got)}
	}
	if want, got := original.GetKind(), c.GetKind(); want != got {
		return nil, &itemError{itemVersion, fmt.Errorf("invalid kind (expected %v, received %v)", want, got)}
	}
	if err := checkIdentity(original, c); err != nil {
		return nil, &itemError{itemIdentity, err}
	}
	if err := restoreMeta(original, c); err != nil {
		return nil, &itemError{itemMeta, err}
	}
	return c, nil
}

// wordItemError words the failure of the object at index i as upstream
// does for one object or for a list.
func wordItemError(err error, gvk schema.GroupVersionKind, i int, single bool) *Error {
	ie, _ := err.(*itemError)
	if ie == nil {
		ie = &itemError{itemDecode, err}
	}
	if single {
		switch ie.kind {
		case itemIdentity:
			return newError(err, "conversion webhook for %v returned invalid object: %v", gvk, err)
		case itemMeta:
			return newError(err, "conversion webhook for %v returned invalid metadata: %v", gvk, err)
		default:
			return newError(err, "conversion webhook for %v returned invalid object at index 0: %v", gvk, err)
		}
	}
	if ie.kind == itemMeta {
		return newError(err, "conversion webhook for %v returned invalid metadata in object at index %v: %v", gvk, i, err)
	}
	return newError(err, "conversion webhook for %v returned invalid converted object at index %v: %v", gvk, i, err)
}

// isEmptyObject reports whether u has apiVersion and kind and nothing
// else.
func isEmptyObject(u *unstructured.Unstructured) bool {
	if len(u.Object) != 2 {
		return false
	}
	_, k := u.Object["kind"]
	_, v := u.Object["apiVersion"]
	return k && v
}
