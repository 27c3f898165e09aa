package responsewriters

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// ErrorToStatus turns any error into the Status kube-apiserver would answer.
// An error that is not an API status error is answered as upstream's
// ErrorToAPIStatus answers it (k8s.io/apiserver v0.37.2,
// pkg/endpoints/handlers/responsewriters/status.go): code 500 (409 for a
// storage resourceVersion conflict), no reason, the error's text as the
// message and no details — not an InternalError, which upstream makes only
// where its code says so (apierrors.NewInternalError). kube-apiserver
// v1.37.2 answers `kubectl logs` of a pod on a node without addresses so:
// {"code":500,"message":"no preferred addresses found; known addresses: []"}.
func ErrorToStatus(err error) *metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		s := se.Status()
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
		return &s
	}
	code := http.StatusInternalServerError
	if storage.IsConflict(err) {
		code = http.StatusConflict
	}
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    int32(code),
		Reason:  metav1.StatusReasonUnknown,
		Message: err.Error(),
	}
}

// WriteStatus writes s as a v1 Status object with HTTP status s.Code.
// When details.retryAfterSeconds > 0 the Retry-After header is set too.
//
// Only JSON is written here, with X-Content-Type-Options: nosniff, as
// kube-apiserver writes a few fixed answers (the shutting-down 503). Errors
// upstream writes with ErrorNegotiated (the filters', go-restful's) are
// handlers.WriteStatusNegotiated's.
func WriteStatus(w http.ResponseWriter, s *metav1.Status) {
	writeStatus(w, CompleteStatus(s))
}

// CompleteStatus returns a copy of s as it is written: kind Status,
// version v1, status Failure and code 500 when unset.
func CompleteStatus(s *metav1.Status) *metav1.Status {
	out := *s
	out.Kind = "Status"
	out.APIVersion = "v1"
	if out.Status == "" {
		out.Status = metav1.StatusFailure
	}
	if out.Code == 0 {
		out.Code = http.StatusInternalServerError
	}
	return &out
}

func writeStatus(w http.ResponseWriter, out *metav1.Status) {
	code := int(out.Code)
	if out.Details != nil && out.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(out.Details.RetryAfterSeconds)))
	}
	body, err := json.Marshal(out)
	if err != nil { // cannot happen for a Status; keep the contract anyway
		slog.Error("encode status", "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// WriteError writes err as a Status (see ErrorToStatus).
func WriteError(w http.ResponseWriter, err error) {
	WriteStatus(w, ErrorToStatus(err))
}

// InternalError logs err and answers 500 with a generic Status.
func InternalError(w http.ResponseWriter, r *http.Request, err error) {
	slog.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	WriteError(w, apierrors.NewInternalError(err))
}
