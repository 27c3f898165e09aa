package filters

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithAudit records each request as audit events under policy (Metadata
// level at most for now): RequestReceived when the request comes in;
// ResponseStarted when a long-running request (watch...) writes its
// headers; ResponseComplete when the handler returns; Panic (code 500,
// message "APIServer panic'd: <v>") when it panics, and the panic goes on.
// Stages in policy.OmitStages are skipped. A nil backend or level None
// disables the filter. m (nil: none) counts each request's level and the
// events sent; a request whose RequestReceived event the backend refuses
// is answered 500 and counted as rejected, as upstream does.
func WithAudit(handler http.Handler, backend audit.Backend, policy audit.PolicyEvaluator, isLongRunning LongRunningFunc, m *audit.Metrics) http.Handler {
	if auditOff(backend, policy) {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, ac := auditContext(r)
		ac.Begin(newAuditEvent(r), policy.EvaluatePolicyRule(auditAttributes(r)), backend, m)
		info, _ := request.RequestInfoFrom(r.Context())
		longRunning := info != nil && isLongRunning(r, info)
		if !ac.Emit(audit.StageRequestReceived) {
			m.RequestRejected()
			internalError(w, r, errAuditNotStored, orDefault(nil))
			return
		}

		aw := &auditResponseWriter{ResponseWriter: w, ac: ac, emitStarted: longRunning}
		defer func() {
			if p := recover(); p != nil {
				ac.SetResponseStatus(&metav1.Status{
					Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
					Message: fmt.Sprintf("APIServer panic'd: %v", p),
				})
				ac.Emit(audit.StagePanic)
				panic(p)
			}
			closedEarly := &metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"}
			if longRunning && ac.SetResponseStatusIfUnset(closedEarly) {
				ac.Emit(audit.StageResponseStarted)
			}
			ac.SetResponseStatusIfUnset(closedEarly)
			ac.Emit(audit.StageResponseComplete)
		}()
		handler.ServeHTTP(aw, r)
	})
}

// auditOff reports whether nothing can be audited: no backend, no policy,
// or a fixed policy of level None.
func auditOff(backend audit.Backend, policy audit.PolicyEvaluator) bool {
	if backend == nil || policy == nil {
		return true
	}
	p, fixed := policy.(audit.Policy)
	return fixed && !audit.LevelNone.Less(p.Level)
}

// auditAttributes are what the policy rules match r on: its user and
// request info.
func auditAttributes(r *http.Request) audit.Attributes {
	ctx := r.Context()
	a := audit.Attributes{Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	if info, ok := request.RequestInfoFrom(ctx); ok {
		a.Verb = info.Verb
		a.IsResourceRequest = info.IsResourceRequest
		a.Namespace = info.Namespace
		a.APIGroup = info.APIGroup
		a.Resource = info.Resource
		a.Subresource = info.Subresource
		a.Name = info.Name
		if info.Path != "" {
			a.Path = info.Path
		}
	}
	if u, ok := request.UserFrom(ctx); ok {
		a.User, a.Groups = u.Name, u.Groups
	}
	return a
}

// errAuditNotStored answers a request whose audit event was refused.
var errAuditNotStored = errors.New("failed to store audit event")

// auditContext returns the request's audit Context, adding one if
// WithAuditInit did not run.
func auditContext(r *http.Request) (*http.Request, *audit.Context) {
	if ac := audit.FromContext(r.Context()); ac != nil {
		return r, ac
	}
	ctx := audit.WithContext(r.Context())
	return r.WithContext(ctx), audit.FromContext(ctx)
}

// newAuditEvent fills the request part of an event.
func newAuditEvent(r *http.Request) *audit.Event {
	ctx := r.Context()
	received, ok := request.ReceivedTimestampFrom(ctx)
	if !ok {
		received = time.Now()
	}
	ev := &audit.Event{
		AuditID:                  types.UID(request.AuditIDFrom(ctx)),
		RequestURI:               r.URL.RequestURI(),
		Verb:                     strings.ToLower(r.Method),
		SourceIPs:                sourceIPs(r),
		UserAgent:                truncateUserAgent(r.UserAgent()),
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
	}
	if info, ok := request.RequestInfoFrom(ctx); ok {
		ev.Verb = info.Verb
		if info.IsResourceRequest {
			ev.ObjectRef = &audit.ObjectReference{
				Resource:    info.Resource,
				Namespace:   info.Namespace,
				Name:        info.Name,
				APIGroup:    info.APIGroup,
				APIVersion:  info.APIVersion,
				Subresource: info.Subresource,
			}
		}
	}
	if u, ok := request.UserFrom(ctx); ok {
		ev.User = authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			ev.User.Extra = make(map[string]authnv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				ev.User.Extra[k] = v
			}
		}
	}
	return ev
}

const (
	maxUserAgentLength      = 1024
	userAgentTruncateSuffix = "...TRUNCATED"
)

func truncateUserAgent(ua string) string {
	if len(ua) > maxUserAgentLength {
		return ua[:maxUserAgentLength] + userAgentTruncateSuffix
	}
	return ua
}

// sourceIPs lists the X-Forwarded-For chain, then X-Real-Ip if new, then the
// connection's address unless it repeats the last one, as upstream does.
func sourceIPs(r *http.Request) []string {
	var ips []netip.Addr
	has := func(a netip.Addr) bool {
		for _, b := range ips {
			if a == b {
				return true
			}
		}
		return false
	}
	if fwd := r.Header.Get("X-Forwarded-For"); fwd != "" {
		for _, part := range strings.Split(fwd, ",") {
			if a, err := netip.ParseAddr(strings.TrimSpace(part)); err == nil {
				ips = append(ips, a.Unmap())
			}
		}
	}
	if real := r.Header.Get("X-Real-Ip"); real != "" {
		if a, err := netip.ParseAddr(strings.TrimSpace(real)); err == nil && !has(a.Unmap()) {
			ips = append(ips, a.Unmap())
		}
	}
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = h
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if len(ips) == 0 || ips[len(ips)-1] != a {
			ips = append(ips, a)
		}
	}
	out := make([]string, len(ips))
	for i, a := range ips {
		out[i] = a.String()
	}
	return out
}

// auditResponseWriter records the response code in the audit Context and,
// if emitStarted, emits ResponseStarted when the headers go out.
type auditResponseWriter struct {
	http.ResponseWriter
	ac          *audit.Context
	emitStarted bool
	once        sync.Once
}

func (a *auditResponseWriter) processCode(code int) {
	a.once.Do(func() {
		a.ac.SetResponseCode(code)
		if a.emitStarted {
			a.ac.Emit(audit.StageResponseStarted)
		}
	})
}

func (a *auditResponseWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		a.processCode(code)
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *auditResponseWriter) Write(b []byte) (int, error) {
	a.processCode(http.StatusOK)
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the wrapped writer.
func (a *auditResponseWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// FlushError flushes the wrapped writer and returns its error (a closed
// connection, a timed-out request), which http.ResponseController prefers
// to Flush.
func (a *auditResponseWriter) FlushError() error {
	a.processCode(http.StatusOK)
	return http.NewResponseController(a.ResponseWriter).Flush()
}

// Flush implements http.Flusher for callers that do not want the error.
func (a *auditResponseWriter) Flush() { _ = a.FlushError() }

func (a *auditResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(a.ResponseWriter).Hijack()
	if err == nil {
		a.processCode(http.StatusSwitchingProtocols)
	}
	return conn, rw, err
}
