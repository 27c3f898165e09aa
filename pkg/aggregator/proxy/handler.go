package proxy

import (
	"context"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// DiscoveryTimeout bounds a proxied discovery request (GET
// /apis/<group>/<version>), as upstream: discovery must be fast.
const DiscoveryTimeout = 5 * time.Second

// redirectMessage is what a client gets instead of a backend's redirect.
const redirectMessage = "the backend attempted to redirect this request, which is not permitted"

// Handler proxies every request it gets to the backend of one APIService.
// [Handler.Update] may be called at any time, concurrently with requests.
type Handler struct {
	services serviceresolver.Lister
	logger   *slog.Logger
	errorLog *log.Logger
	x509     *x509metrics.Counters
	target   atomic.Pointer[target]
}

// target is what the handler proxies to, replaced as a whole.
type target struct {
	name         string
	namespace    string
	service      string
	port         int32
	available    bool
	transport    *Transport
	transportErr error
	// rt is transport's RoundTripper wrapped by the x509 counters, made
	// once per update.
	rt http.RoundTripper
}

// NewHandler returns a handler that answers 503 until it is updated.
// x509 (nil: none) counts proxied requests to backends whose certificates
// have no SAN or a SHA-1 signature (apiserver_kube_aggregator_x509_*).
func NewHandler(services serviceresolver.Lister, logger *slog.Logger, x509 *x509metrics.Counters) *Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return &Handler{services: services, logger: logger, errorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug), x509: x509}
}

// Update points the handler at svc (non-local), through t, or, if
// transportErr is set, makes every request fail with it (500), as
// upstream does with a transport it could not build.
func (h *Handler) Update(svc *apiregistrationv1.APIService, t *Transport, transportErr error) {
	tg := &target{
		name:         svc.Name,
		available:    apiservice.IsAvailable(svc),
		transport:    t,
		transportErr: transportErr,
	}
	if t != nil {
		tg.rt = h.x509.Wrap(t.RoundTripper())
	}
	if s := svc.Spec.Service; s != nil {
		tg.namespace, tg.service = s.Namespace, s.Name
		if s.Port != nil {
			tg.port = *s.Port
		}
	}
	h.target.Store(tg)
}

// ServeHTTP implements http.Handler: 503 "service unavailable" while the
// APIService is not Available or its service has no ready endpoint, 500
// without a user in the context; else the request goes to the backend
// with the path and query unchanged and the user in X-Remote-* headers.
// A transport error (nothing listening, TLS failure) is 503 with the
// error's text.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	tg := h.target.Load()
	if tg == nil || !tg.available {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if tg.transportErr != nil {
		http.Error(w, tg.transportErr.Error(), http.StatusInternalServerError)
		return
	}
	if tg.transport == nil {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	ctx := req.Context()
	u, ok := request.UserFrom(ctx)
	if !ok {
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	loc, err := serviceresolver.Resolve(ctx, h.services, tg.namespace, tg.service, tg.port)
	if err != nil {
		h.logger.Error("resolve aggregated service", "apiservice", tg.name, "service", tg.namespace+"/"+tg.service, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if isDiscovery(req.URL.Path) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DiscoveryTimeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	// Upgrades are not counted: upstream's upgrade path dials with the
	// transport's TLS configuration, around its counting wrapper.
	rt := tg.rt
	if IsUpgradeRequest(req) {
		rt = tg.transport.UpgradeRoundTripper()
	}
	auditID := request.AuditIDFrom(ctx)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = loc.Scheme
			pr.Out.URL.Host = loc.Host
			pr.Out.Host = loc.Host
			pr.SetXForwarded()
			requestheader.SetHeaders(pr.Out.Header, u)
			if auditID != "" {
				pr.Out.Header.Set(audit.HeaderAuditID, auditID)
			}
		},
		Transport: rt,
		// Streams (watch: no Content-Length) are flushed on every write by
		// ReverseProxy itself; other responses are copied in large writes.
		FlushInterval:  0,
		ModifyResponse: rejectRedirects,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.logger.Debug("proxy to aggregated service failed", "apiservice", tg.name, "backend", loc.Host, "err", err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		},
		ErrorLog: h.errorLog,
	}
	// Served elsewhere: as upstream's RequestDelegated, a watch's
	// priority-and-fairness seat here goes now (the backend paces its
	// initial events under its own flow control).
	watchinit.Initialized(ctx)
	rp.ServeHTTP(w, req)
}

// rejectRedirects replaces a backend's redirect with 502, as
// kube-apiserver does by default (--aggregator-reject-forwarding-redirect).
func rejectRedirects(resp *http.Response) error {
	if resp.StatusCode < 300 || resp.StatusCode > 399 || resp.Header.Get("Location") == "" {
		return nil
	}
	_ = resp.Body.Close()
	resp.StatusCode = http.StatusBadGateway
	resp.Status = http.StatusText(http.StatusBadGateway)
	resp.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	resp.Body = io.NopCloser(strings.NewReader(redirectMessage))
	resp.ContentLength = int64(len(redirectMessage))
	return nil
}

// isDiscovery reports whether path is /apis/<group>/<version>.
func isDiscovery(path string) bool {
	return len(strings.Split(strings.Trim(path, "/"), "/")) == 3
}

// IsUpgradeRequest reports whether req asks for a connection upgrade
// (Connection: Upgrade with an Upgrade header).
func IsUpgradeRequest(req *http.Request) bool {
	return req.Header.Get("Upgrade") != "" && httpguts.HeaderValuesContainsToken(req.Header["Connection"], "upgrade")
}
