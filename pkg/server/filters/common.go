package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// LongRunningFunc reports whether a request is long-running (watch, proxy,
// exec...): such requests bypass the wait group, the deadline, the timeout
// and max-in-flight.
type LongRunningFunc func(r *http.Request, info *request.RequestInfo) bool

// DefaultLongRunning is kube-apiserver's rule (lifecycle.md 29).
func DefaultLongRunning(_ *http.Request, info *request.RequestInfo) bool {
	return request.IsLongRunning(info)
}

func orDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

var htmlSanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// internalError answers 500 in plain text, as upstream's filters do:
// `Internal Server Error: "<uri>": <err>`.
func internalError(w http.ResponseWriter, r *http.Request, err error, logger *slog.Logger) {
	http.Error(w, htmlSanitizer.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err)),
		http.StatusInternalServerError)
	logger.Error("internal error in handler chain", "method", r.Method, "URI", r.RequestURI, "err", err)
}

// errNoRequestInfo is what a filter answers when the chain is mis-built.
var errNoRequestInfo = fmt.Errorf("no RequestInfo found in the context, handler chain must be wrong")

// exemptPathPrefixes are served even while shutting down (lifecycle.md 24).
var exemptPathPrefixes = []string{"/readyz", "/livez", "/healthz", "/metrics"}

// LoopbackUserAgentPrefix starts the User-Agent of the server's own loopback
// client.
const LoopbackUserAgentPrefix = "kube-apiserver/"

// ControllerManagerUserAgentPrefix begins the user agent of kapi's
// in-process controllers (kube-controller-manager's). They authenticate as
// system:apiserver, but stand for a kube-controller-manager, whose
// requests upstream does not count as self-requests.
const ControllerManagerUserAgentPrefix = "kube-controller-manager/"

// isExemptFromShutdown reports whether r is still served after the server
// stopped accepting new requests (lifecycle.md 24): loopback clients, health
// probes and metrics scraping (plain prefix match). WithRetryAfter and
// WithWaitGroup must agree on this set, or the drain could wait forever.
func isExemptFromShutdown(r *http.Request) bool {
	if strings.HasPrefix(r.UserAgent(), LoopbackUserAgentPrefix) {
		return true
	}
	for _, p := range exemptPathPrefixes {
		if strings.HasPrefix(r.URL.Path, p) {
			return true
		}
	}
	return false
}

// writeShuttingDown writes the 503 of lifecycle.md 22: Retry-After: 1 and a
// ServiceUnavailable Status "apiserver is shutting down".
func writeShuttingDown(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	st := apierrors.NewServiceUnavailable("apiserver is shutting down").ErrStatus
	responsewriters.WriteStatus(w, &st)
}
