package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// statusError is an error that carries the Status to answer with.
type statusError struct{ s metav1.Status }

func (e *statusError) Error() string         { return e.s.Message }
func (e *statusError) Status() metav1.Status { return e.s }

// newNotAcceptable is upstream's 406 for a failed Accept negotiation.
func newNotAcceptable(accepted []string) error {
	return newNotAcceptableMessage(fmt.Sprintf("only the following media types are accepted: %s", strings.Join(accepted, ", ")))
}

// newNotAcceptableMessage is a 406 NotAcceptable with a specific message
// (e.g. a PartialObjectMetadata request for a list).
func newNotAcceptableMessage(msg string) error {
	return &statusError{metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: msg,
	}}
}

// newUnsupportedMediaType is upstream's 415 for a request body whose
// Content-Type cannot be decoded.
func newUnsupportedMediaType(accepted []string) error {
	return &statusError{metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(accepted, ", ")),
	}}
}

// NewMethodNotAllowed is the 405 kube answers for a method a resource path
// does not serve: `the server does not allow this method on the requested
// resource`.
func NewMethodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false)
}

// NewNotFound is the 404 kube answers for an unknown path under an API
// root: `the server could not find the requested resource`.
func NewNotFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)
}

// errorToStatus turns err into the Status to answer with; errors that are
// not API errors are logged and answered as upstream's ErrorToAPIStatus
// answers them (responsewriters.ErrorToStatus).
func errorToStatus(err error, logger *slog.Logger) *metav1.Status {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		logger.Error("apiserver received an error that is not a metav1.Status", "err", err)
	}
	s := responsewriters.ErrorToStatus(err)
	s.Kind = "Status"
	s.APIVersion = "v1"
	if s.Status == "" {
		s.Status = metav1.StatusFailure
	}
	return s
}

// WriteErrorNegotiated writes err as a metav1.Status in the media type the
// request's Accept header asks for (JSON, YAML or protobuf; JSON when the
// header asks for nothing a Status can be written in). A Retry-After header
// is set when details.retryAfterSeconds > 0. Errors that are not API
// errors become a logged 500 without a reason, as upstream's.
func WriteErrorNegotiated(w http.ResponseWriter, req *http.Request, ns runtime.NegotiatedSerializer, logger *slog.Logger, err error) {
	if logger == nil {
		logger = slog.Default()
	}
	status := errorToStatus(err, logger)
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	code := int(status.Code)
	if code == http.StatusNoContent {
		w.WriteHeader(code)
		return
	}
	WriteObjectNegotiated(w, req, ns, logger, schema.GroupVersion{}, code, status)
}

// WriteObjectNegotiated writes obj (a Status, or a document such as an
// APIResourceList) in the negotiated media type, encoded for gv. If the
// Accept header allows nothing, a failure status code keeps its object
// (as indented JSON) and a success becomes 406.
func WriteObjectNegotiated(w http.ResponseWriter, req *http.Request, ns runtime.NegotiatedSerializer, logger *slog.Logger, gv schema.GroupVersion, code int, obj runtime.Object) {
	if logger == nil {
		logger = slog.Default()
	}
	_, info, err := negotiateOutput(req, ns, defaultRestrictions{})
	if err != nil {
		// Written raw and not audited, as upstream's
		// WriteObjectNegotiated (kube-apiserver v1.37.2's event for a
		// 406 has the code alone).
		if code < http.StatusOK || code >= http.StatusBadRequest {
			writeRawJSON(w, code, obj)
			return
		}
		writeRawJSON(w, http.StatusNotAcceptable, errorToStatus(err, logger))
		return
	}
	audit.LogResponseObject(req.Context(), obj, gv, ns)
	serializeObject(w, req, logger, info.MediaType, ns.EncoderForVersion(info.Serializer, gv), code, obj)
}

// WriteStatusNegotiated writes s as kube-apiserver's filter chain and
// not-found handlers write their errors (responsewriters.ErrorNegotiated
// with the server's codecs): in the media type the request's Accept asks
// for (JSON, pretty JSON, YAML or protobuf), or as indented JSON with the
// status's own code when Accept allows none of them. Retry-After is set
// from details.retryAfterSeconds; the Status is the audit event's response
// object (not when written raw, as upstream). A Status is unversioned, so
// the group-version upstream passes does not change a byte and none is
// taken here.
//
// X-Content-Type-Options is not set: upstream's 401, bad ?timeout= and
// not-ready 503 do not send it; its Forbidden and impersonation errors
// (RespondWithError) do, see WriteStatusNegotiatedNoSniff.
func WriteStatusNegotiated(w http.ResponseWriter, req *http.Request, s *metav1.Status) {
	// WriteErrorNegotiated's steps on the Status itself, without wrapping
	// it in an error to take it out again.
	out := *responsewriters.CompleteStatus(s)
	if out.Details != nil && out.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(out.Details.RetryAfterSeconds)))
	}
	code := int(out.Code)
	if code == http.StatusNoContent {
		w.WriteHeader(code)
		return
	}
	WriteObjectNegotiated(w, req, metaCodecs, nil, schema.GroupVersion{}, code, &out)
}

// WriteStatusNegotiatedNoSniff is WriteStatusNegotiated with
// X-Content-Type-Options: nosniff, as upstream's
// responsewriters.RespondWithError (403 Forbidden from authorization, the
// impersonation filter's 400 and 403).
func WriteStatusNegotiatedNoSniff(w http.ResponseWriter, req *http.Request, s *metav1.Status) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	WriteStatusNegotiated(w, req, s)
}

// NotFoundInRoot answers a path under a REST root that nothing serves, as
// go-restful's service error handler upstream: 404 Status "the server could
// not find the requested resource", negotiated (WriteStatusNegotiated).
func NotFoundInRoot(w http.ResponseWriter, req *http.Request) {
	WriteErrorNegotiated(w, req, metaCodecs, nil, NewNotFound())
}

// MethodNotAllowedInRoot answers a method a go-restful route does not
// serve: 405 Status "the server does not allow this method on the requested
// resource", negotiated (WriteStatusNegotiated).
func MethodNotAllowedInRoot(w http.ResponseWriter, req *http.Request) {
	WriteErrorNegotiated(w, req, metaCodecs, nil, NewMethodNotAllowed())
}
