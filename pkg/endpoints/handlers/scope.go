package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// DefaultMaxRequestBodyBytes is the largest request body accepted (3 MiB,
// kube-apiserver's --max-resource-write-bytes default).
const DefaultMaxRequestBodyBytes = 3 * 1024 * 1024

// FieldManager keeps metadata.managedFields (server-side apply's
// bookkeeping) and merges applied configurations. It is optional: with a
// nil FieldManager, writes leave managedFields as the storage makes them
// and server-side apply is not served (415). Implementations are safe for
// concurrent use; pkg/endpoints/fieldmanager builds them.
type FieldManager interface {
	// UpdateNoErrors returns newObj with its managedFields updated for a
	// non-apply write (create, update, JSON/merge/strategic patch) made
	// by manager; liveObj is the stored object (an empty one on create).
	// It never fails the request: on internal errors it keeps liveObj's
	// managedFields.
	UpdateNoErrors(liveObj, newObj runtime.Object, manager string) runtime.Object
	// Apply merges the applied configuration appliedObj (unstructured)
	// into liveObj for manager and returns the result. Errors are API
	// statuses: 409 Conflict listing the conflicting managers and fields
	// unless force, 400 for an applied object that does not fit.
	Apply(liveObj, appliedObj runtime.Object, manager string, force bool) (runtime.Object, error)
}

// UnknownFieldPruner is implemented by the storages whose objects drop
// the fields their schema does not declare (custom resources). The write
// handlers prune every object they pass on (the body of a create or an
// update, a patched object, an applied configuration) before the field
// manager sees it, so that managedFields only name stored fields, and
// report the fields dropped as fieldValidation says: a Warning header
// `unknown field "spec.foo"` each under Warn (the default), a 400
// `strict decoding error: unknown field "spec.foo", ...` under Strict,
// nothing under Ignore.
type UnknownFieldPruner interface {
	// PruneUnknownFields removes from obj the fields its schema does not
	// declare and returns their paths ("spec.foo"), sorted.
	PruneUnknownFields(obj runtime.Object) []string
}

// DecodedDefaulter is implemented by the storages whose decoded request
// objects are defaulted by upstream's decoder but not by the scope's
// Serializer: custom resources. Upstream's custom-resource codec prunes
// and then applies the version's schema defaults as it decodes a create or
// update body and a JSON or merge patch's result (apiextensions-apiserver
// v0.37.2, customresource_handler.go: schemaCoercingDecoder, then
// unstructuredDefaulter), so the field manager records the defaulted
// fields as the writer's (kube-apiserver v1.37.2: `kubectl create` of a
// custom resource whose schema defaults spec.d makes the kubectl-create
// manager own f:spec.f:d). The handlers default such an object right after
// pruning it (see UnknownFieldPruner), never an applied configuration,
// which upstream does not decode.
type DecodedDefaulter interface {
	DefaultDecoded(obj runtime.Object)
}

// RequestScope is what every handler of one (sub)resource needs. It is built
// once, at install time, and shared by all requests (read-only).
type RequestScope struct {
	// Serializer encodes and decodes the resource's objects
	// (pkg/api/scheme.Codecs for built-in types).
	Serializer runtime.NegotiatedSerializer
	// ParameterCodec decodes query parameters into option structs
	// (metav1.GetOptions, ..., metainternalversion.ListOptions).
	ParameterCodec runtime.ParameterCodec

	Creater   runtime.ObjectCreater
	Convertor runtime.ObjectConvertor
	Typer     runtime.ObjectTyper
	// Defaulter, if set, defaults objects a patch builds without decoding
	// them (strategic merge patches), as decoding does.
	Defaulter runtime.ObjectDefaulter

	// TableConvertor converts objects to Tables; nil disables as=Table.
	TableConvertor rest.TableConvertor
	// FieldManager is optional (see FieldManager).
	FieldManager FieldManager
	// Pruner, optional, drops undeclared fields (see UnknownFieldPruner).
	Pruner UnknownFieldPruner
	// DecodedDefaulter, optional, defaults decoded request objects after
	// pruning (see DecodedDefaulter).
	DecodedDefaulter DecodedDefaulter
	// CheckConversion, when set, returns the error kube-apiserver's
	// conversion of an object to its internal version would, nil for an
	// object it takes. Built-in kinds whose internal version holds some
	// values of the served version in another type refuse the values that
	// type cannot hold (apps/v1 DaemonSet and Deployment keep an
	// annotation as an integer field); kapi has no internal versions, and
	// the handlers answer the error where upstream's decoding would fail.
	CheckConversion func(obj runtime.Object) error
	// SharedWatchObjects: watches ask the storage for shared event
	// objects (cacheable.Objects), each encoded once for all watchers.
	SharedWatchObjects bool
	// SharedListObjects: lists ask the storage for their items as shared
	// objects (cacheable.WithItems), whose encodings the watch cache keeps.
	SharedListObjects bool
	// SharedGetObjects: gets ask the storage for the watch cache's entry
	// as a shared object (cacheable.WithItem), whose encodings it keeps.
	SharedGetObjects bool
	// getEncoders caches, per media type, the encoder and identifier of
	// the GET responses written from kept encodings (see getencode.go).
	getEncoders sync.Map
	// AcceptsGroupVersion, when set, says which other group-versions a
	// request body may be written in (converted to the scope's), as
	// upstream's AcceptsGroupVersionDelegate (the eviction subresource
	// takes policy/v1beta1 bodies too).
	AcceptsGroupVersion func(schema.GroupVersion) bool
	// Admission validates writes before they are stored (nil: none).
	Admission admission.Chain

	// Resource is the group-version-resource served; Subresource is "" for
	// the main resource.
	Resource    schema.GroupVersionResource
	Subresource string
	// Kind is the kind objects are served as.
	Kind schema.GroupVersionKind
	// Namespaced tells whether objects live in namespaces.
	Namespaced bool

	// MaxRequestBodyBytes bounds request bodies; 0 means
	// DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// MinRequestTimeout is --min-request-timeout: a watch without
	// timeoutSeconds lasts MinRequestTimeout × (1 + rand[0,1)).
	MinRequestTimeout time.Duration
	// Metrics receives the watch events sent (apiserver_watch_events_*)
	// and the sizes of request bodies; nil: none.
	Metrics *metrics.Metrics
	// bodySizes is Metrics' recorder of this resource's request bodies.
	bodySizesOnce sync.Once
	bodySizes     *metrics.BodySizes

	Logger *slog.Logger
}

func (s *RequestScope) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// err writes err as a Status negotiated to the request's Accept header.
func (s *RequestScope) err(err error, w http.ResponseWriter, req *http.Request) {
	WriteErrorNegotiated(w, req, s.Serializer, s.logger(), err)
}

var errEmptyName = apierrors.NewBadRequest("name must be provided")

// requestNamespace is the namespace a request works in: the one in its path
// for namespaced resources, "" for cluster-scoped ones.
func (s *RequestScope) requestNamespace(info *request.RequestInfo) string {
	if !s.Namespaced {
		return ""
	}
	return info.Namespace
}

// requestInfo returns the request's RequestInfo and the context carrying
// its namespace. A namespace that cannot be a path segment ("." or "..",
// or one holding "%") is a 400 BadRequest, as kube answers for such a name
// (`Namespace parameter invalid: "..": may not be '..'`): it never reaches
// the storage, whose keys it would escape.
func (s *RequestScope) requestInfo(req *http.Request) (context.Context, *request.RequestInfo, string, error) {
	ctx := req.Context()
	info, ok := request.RequestInfoFrom(ctx)
	if !ok {
		return ctx, nil, "", apierrors.NewInternalError(errors.New("no RequestInfo found in the context"))
	}
	ns := s.requestNamespace(info)
	if msgs := path.IsValidPathSegmentName(ns); ns != "" && len(msgs) > 0 {
		return ctx, nil, "", apierrors.NewBadRequest(fmt.Sprintf("Namespace parameter invalid: %q: %s", ns, strings.Join(msgs, ";")))
	}
	if request.StateOf(ctx).SetNamespace(ns) {
		return ctx, info, ns, nil
	}
	return request.WithNamespace(ctx, ns), info, ns, nil
}

// maxBodyBytes is the scope's request body limit.
func (s *RequestScope) maxBodyBytes() int64 {
	if s.MaxRequestBodyBytes <= 0 {
		return DefaultMaxRequestBodyBytes
	}
	return s.MaxRequestBodyBytes
}

// deadlineExceeded is the 504 of a request whose context is done: its
// deadline passed (the timeout filter has answered for it) or its client
// left. Handlers check it between stages, so such a request stops working
// instead of finishing in the background.
func deadlineExceeded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within the allotted timeout: %v", context.Cause(ctx)), 0)
	}
	return nil
}

// readBody reads the request body, at most the scope's limit: a longer body
// is a 413 RequestEntityTooLarge `limit is <n>`, one not received by the
// request's deadline a 504 Timeout. A body read in full is observed in
// apiserver_request_body_size_bytes under verb, as upstream's
// limitedReadBodyWithRecordMetric.
func (s *RequestScope) readBody(req *http.Request, verb metrics.BodyVerb) ([]byte, error) {
	limit := s.maxBodyBytes()
	if req.Body == nil {
		return nil, nil
	}
	defer func() { _ = req.Body.Close() }()
	if req.ContentLength > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	lr := &io.LimitedReader{R: req.Body, N: limit + 1}
	// A declared length (at most limit, checked above) sizes the buffer:
	// io.ReadAll's growth from 512 bytes cost every write request a few
	// allocations and twice its body's size.
	var buf []byte
	if req.ContentLength > 0 {
		buf = make([]byte, 0, req.ContentLength+1)
	}
	data, err := readAll(lr, buf)
	if err != nil {
		// The request's deadline bounds the body's reading too (the
		// RequestDeadline filter): a body still incomplete then is the
		// request timing out, a 504 like the timeout filter's.
		if errors.Is(err, os.ErrDeadlineExceeded) || req.Context().Err() != nil {
			return nil, apierrors.NewTimeoutError("request did not complete within the allotted timeout: the request body was not received in time", 0)
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to read the request body: %v", err))
	}
	if lr.N <= 0 {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	if s.Metrics != nil {
		s.bodySizesOnce.Do(func() { s.bodySizes = s.Metrics.BodySizes(s.Resource.Group, s.Resource.Resource) })
		s.bodySizes.Observe(verb, len(data))
	}
	return data, nil
}

// readAll reads r to its end into buf's spare capacity, as io.ReadAll
// does (growing buf once it is full), and returns what it read. A buf
// one byte longer than the body takes it without growing: the read that
// finds the end has room to return 0 bytes.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) == 0 {
		return io.ReadAll(r)
	}
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// decodeParameters decodes the query into opts (a meta.k8s.io/v1 options
// struct or metainternalversion.ListOptions); errors are 400 BadRequest.
func (s *RequestScope) decodeParameters(req *http.Request, opts runtime.Object) error {
	q := query(req)
	if len(q) == 0 {
		return nil
	}
	if err := s.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// invalidOptions is the 422 kube answers for options that fail validation,
// e.g. `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ...`.
func invalidOptions(kind, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, name, errs)
}

// pruneUnknownFields prunes obj, a decoded request body, with the scope's
// Pruner, if any, reports the fields dropped as directive (a
// fieldValidation value, "" meaning Warn) says (see UnknownFieldPruner)
// and defaults it with the scope's DecodedDefaulter, if any.
// Under Strict the error is upstream's for a body its decoder refused
// ("<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding
// error: unknown field ..."): upstream's custom-resource decoder reports
// the fields it prunes as strict decoding errors.
func (s *RequestScope) pruneUnknownFields(ctx context.Context, obj runtime.Object, directive string) error {
	errs := s.prunedFields(obj)
	s.defaultDecoded(obj)
	if len(errs) == 0 {
		return nil
	}
	switch fieldValidation(directive) {
	case metav1.FieldValidationStrict:
		gvk := obj.GetObjectKind().GroupVersionKind()
		return s.transformDecodeError(runtime.NewStrictDecodingError(errs), obj, &gvk, nil)
	case metav1.FieldValidationWarn:
		addWarnings(ctx, errs)
	}
	return nil
}

// defaultDecoded defaults obj, a decoded and pruned request object, with
// the scope's DecodedDefaulter, if any.
func (s *RequestScope) defaultDecoded(obj runtime.Object) {
	if s.DecodedDefaulter != nil {
		s.DecodedDefaulter.DefaultDecoded(obj)
	}
}

// prunedFields prunes obj with the scope's Pruner, if any, and returns an
// `unknown field "<path>"` error for each field dropped.
func (s *RequestScope) prunedFields(obj runtime.Object) []error {
	if s.Pruner == nil {
		return nil
	}
	pruned := s.Pruner.PruneUnknownFields(obj)
	if len(pruned) == 0 {
		return nil
	}
	errs := make([]error, len(pruned))
	for i, p := range pruned {
		errs[i] = fmt.Errorf("unknown field %q", p)
	}
	return errs
}

// query is req.URL.Query() (nil, which reads as empty, when there is no
// query string: most requests have none, and parsing an empty one makes a
// map all the same).
func query(req *http.Request) url.Values {
	if req.URL.RawQuery == "" {
		return nil
	}
	return req.URL.Query()
}
