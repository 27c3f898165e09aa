package conversion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// Converter converts the custom resources of one CRD between its versions.
//
// No method mutates its inputs. Objects already in the target version are
// returned as they are (the same pointer); converted objects are new, but
// with strategy None they share everything below the top level with their
// input (copy before mutating nested values). A Converter is safe for
// concurrent use.
type Converter interface {
	// ConvertObject converts one object to the group/version to.
	ConvertObject(ctx context.Context, obj *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error)
	// Convert converts objs to the group/version to, with one webhook
	// call for all the objects that are not in to yet. The result has the
	// same length and order as objs. Errors are worded as for a list of
	// the kind of the objects (e.g. Kind=CronTabList).
	Convert(ctx context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion) ([]*unstructured.Unstructured, error)
	// ConvertList converts the items of list in one webhook call and
	// returns a new list of version to (the list's other fields shared).
	ConvertList(ctx context.Context, list *unstructured.UnstructuredList, to schema.GroupVersion) (*unstructured.UnstructuredList, error)
	// CloseIdleConnections closes the idle connections to the webhook, if
	// any. The Converter stays usable; call it when the CRD's converter
	// is replaced or the CRD stops being served.
	CloseIdleConnections()
}

// ServiceResolver finds the address of a service's port; the converter
// calls it for every webhook request to a service reference. Only the host
// (host:port) of the returned URL is used. It must be safe for concurrent
// use.
type ServiceResolver interface {
	ResolveEndpoint(namespace, name string, port int32) (*url.URL, error)
}

// DefaultTimeout bounds a webhook call (the whole request, body included),
// as kube-apiserver's conversion webhook client does.
const DefaultTimeout = 30 * time.Second

// DefaultMaxResponseBytes bounds the body of a webhook response.
// kube-apiserver reads it without limit; kapi caps it to bound memory.
const DefaultMaxResponseBytes = 128 << 20

// Options configures [New]. The zero value works for CRDs with strategy
// None and webhooks given by URL.
type Options struct {
	// ServiceResolver resolves webhook service references; required for
	// CRDs whose webhook is a service.
	ServiceResolver ServiceResolver
	// Timeout bounds each webhook call; 0 means [DefaultTimeout].
	Timeout time.Duration
	// MaxResponseBytes bounds a webhook response body; 0 means
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// Logger receives a debug line per webhook call; nil means
	// slog.Default().
	Logger *slog.Logger
	// X509 counts calls to webhooks whose certificates have no SAN or a
	// SHA-1 signature (apiserver_webhooks_x509_*); nil: not counted.
	X509 *x509metrics.Counters
}

// New returns the Converter for crd's spec.conversion: None (also when
// spec.conversion is unset) or Webhook. It fails on an unknown strategy or
// an unusable webhook configuration (no or two client targets, a URL that
// is not https, a caBundle without certificates, a service without a
// resolver).
func New(crd *apiextensionsv1.CustomResourceDefinition, opts Options) (Converter, error) {
	if crd == nil {
		return nil, errors.New("conversion: nil CustomResourceDefinition")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &converter{valid: make(map[schema.GroupVersion]bool, len(crd.Spec.Versions))}
	for _, v := range crd.Spec.Versions {
		c.valid[schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}] = true
	}
	strategy := apiextensionsv1.NoneConverter
	if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != "" {
		strategy = crd.Spec.Conversion.Strategy
	}
	switch strategy {
	case apiextensionsv1.NoneConverter:
		c.impl = nopConverter{}
	case apiextensionsv1.WebhookConverter:
		w, err := newWebhookConverter(crd, opts)
		if err != nil {
			return nil, err
		}
		c.impl = w
	default:
		return nil, fmt.Errorf("unknown conversion strategy %q for CRD %s", strategy, crd.Name)
	}
	return c, nil
}

// impl is a conversion strategy. convert gets objects of valid versions
// and the target (valid too); single selects the wording of errors (one
// object, or a list whose kind is listGVK).
type impl interface {
	convert(ctx context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion, listGVK schema.GroupVersionKind, single bool) ([]*unstructured.Unstructured, error)
	closeIdleConnections()
}

// converter checks versions against the CRD and delegates to the strategy.
type converter struct {
	valid map[schema.GroupVersion]bool
	impl  impl
}

var _ Converter = (*converter)(nil)

func (c *converter) ConvertObject(ctx context.Context, obj *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, newError(nil, "conversion: nil object")
	}
	if err := c.checkTarget(to); err != nil {
		return nil, err
	}
	if from := obj.GroupVersionKind().GroupVersion(); !c.valid[from] {
		return nil, newError(nil, "request to convert CR from an invalid group/version: %s", from)
	}
	if _, none := c.impl.(nopConverter); none {
		// What nopConverter.convert does for one object, without its
		// slices: every read and write of a custom resource comes here.
		return withGroupVersion(obj, to), nil
	}
	out, err := c.impl.convert(ctx, []*unstructured.Unstructured{obj}, to, schema.GroupVersionKind{}, true)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (c *converter) Convert(ctx context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion) ([]*unstructured.Unstructured, error) {
	return c.convertList(ctx, objs, to, listKindOf(objs, to))
}

// listKindOf returns the list kind errors name for objs: that of the
// first object to convert, with "List" appended.
func listKindOf(objs []*unstructured.Unstructured, to schema.GroupVersion) schema.GroupVersionKind {
	for _, o := range objs {
		if o != nil && o.GetAPIVersion() != to.String() {
			gvk := o.GroupVersionKind()
			gvk.Kind += "List"
			return gvk
		}
	}
	return schema.GroupVersionKind{}
}

func (c *converter) ConvertList(ctx context.Context, list *unstructured.UnstructuredList, to schema.GroupVersion) (*unstructured.UnstructuredList, error) {
	if list == nil {
		return nil, newError(nil, "conversion: nil list")
	}
	items := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		items[i] = &list.Items[i]
	}
	// As upstream, the list's own group/version must be one of the CRD's
	// (an unset one, a list built by the caller, is not checked).
	listGVK := list.GroupVersionKind()
	if gv := listGVK.GroupVersion(); !gv.Empty() && !c.valid[gv] {
		if err := c.checkTarget(to); err != nil {
			return nil, err
		}
		return nil, newError(nil, "request to convert CR from an invalid group/version: %s", listGVK.GroupVersion())
	}
	if listGVK.Kind == "" {
		listGVK = listKindOf(items, to)
	}
	converted, err := c.convertList(ctx, items, to, listGVK)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Object: make(map[string]any, len(list.Object)), Items: make([]unstructured.Unstructured, len(converted))}
	for k, v := range list.Object {
		out.Object[k] = v
	}
	out.SetAPIVersion(to.String())
	for i, u := range converted {
		out.Items[i] = *u
	}
	return out, nil
}

func (c *converter) convertList(ctx context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion, listGVK schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	if err := c.checkTarget(to); err != nil {
		return nil, err
	}
	for i, o := range objs {
		if o == nil {
			return nil, newError(nil, "request to convert CR list failed, list index %d is nil", i)
		}
		if gv := o.GroupVersionKind().GroupVersion(); !c.valid[gv] {
			return nil, newError(nil, "request to convert CR list failed, list index %d has invalid group/version: %s", i, gv)
		}
	}
	if len(objs) == 0 {
		return []*unstructured.Unstructured{}, nil
	}
	return c.impl.convert(ctx, objs, to, listGVK, false)
}

func (c *converter) checkTarget(to schema.GroupVersion) error {
	if !c.valid[to] {
		return newError(nil, "request to convert CR to an invalid group/version: %s", to)
	}
	return nil
}

func (c *converter) CloseIdleConnections() { c.impl.closeIdleConnections() }

// nopConverter is strategy None: it only rewrites apiVersion.
type nopConverter struct{}

func (nopConverter) convert(_ context.Context, objs []*unstructured.Unstructured, to schema.GroupVersion, _ schema.GroupVersionKind, _ bool) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = withGroupVersion(o, to)
	}
	return out, nil
}

// withGroupVersion is withAPIVersion(u, gv.String()), without building
// the string when u has it already.
func withGroupVersion(u *unstructured.Unstructured, gv schema.GroupVersion) *unstructured.Unstructured {
	if isAPIVersion(u.GetAPIVersion(), gv) {
		return u
	}
	return withAPIVersion(u, gv.String())
}

// isAPIVersion tells whether apiVersion is gv.String().
func isAPIVersion(apiVersion string, gv schema.GroupVersion) bool {
	if gv.Group == "" {
		return apiVersion == gv.Version
	}
	g := len(gv.Group)
	return len(apiVersion) == g+1+len(gv.Version) && apiVersion[:g] == gv.Group &&
		apiVersion[g] == '/' && apiVersion[g+1:] == gv.Version
}

func (nopConverter) closeIdleConnections() {}

// withAPIVersion returns u if it has apiVersion already, else a shallow copy
// with it.
func withAPIVersion(u *unstructured.Unstructured, apiVersion string) *unstructured.Unstructured {
	if u.GetAPIVersion() == apiVersion {
		return u
	}
	out := &unstructured.Unstructured{Object: make(map[string]any, len(u.Object))}
	for k, v := range u.Object {
		out.Object[k] = v
	}
	out.SetAPIVersion(apiVersion)
	return out
}

// Error is a failed conversion; see the package documentation for the
// messages and the API status they become.
type Error struct {
	msg string
	err error
}

func newError(cause error, format string, args ...any) *Error {
	return &Error{msg: fmt.Sprintf(format, args...), err: cause}
}

// Error returns upstream's message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying cause (a transport error, a
// context error, a decoding error...), or nil.
func (e *Error) Unwrap() error { return e.err }

// Status returns the API status kube-apiserver answers a request with when
// a conversion fails: 500, Failure, no reason, the error's message.
func (e *Error) Status() metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     http.StatusInternalServerError,
		Reason:   metav1.StatusReasonUnknown,
		Message:  e.msg,
	}
}
