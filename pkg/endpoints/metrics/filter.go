package metrics

import (
	"bufio"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// LongRunningFunc reports whether a request is long-running (watch,
// exec, ...); such resource requests are counted in
// apiserver_longrunning_requests while they run.
type LongRunningFunc func(r *http.Request, info *request.RequestInfo) bool

// WithRequestMetrics records each request when it finishes, in
// apiserver_request_total, apiserver_request_duration_seconds,
// apiserver_request_sli_duration_seconds and (reads) apiserver_response_sizes;
// for a panic with code 500 unless a code was already written (the panic
// goes on). Long-running resource requests (isLongRunning; nil: none) are
// counted in apiserver_longrunning_requests while they run. The latency is
// measured from the request's received timestamp. The RequestInfo filter
// must run before it.
func WithRequestMetrics(handler http.Handler, m *Metrics, isLongRunning LongRunningFunc) http.Handler {
	if m == nil {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, ok := request.ReceivedTimestampFrom(r.Context())
		if !ok {
			start = time.Now()
		}
		info, _ := request.RequestInfoFrom(r.Context())
		if isLongRunning != nil && info != nil && info.IsResourceRequest && isLongRunning(r, info) {
			g := m.longRunningGauge(r, info)
			g.Inc()
			defer g.Dec()
		}
		rw := &StatusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				code := rw.Status()
				if !rw.WroteHeader() {
					code = http.StatusInternalServerError
				}
				m.RecordRequest(r, info, code, rw.Written(), time.Since(start))
				panic(p)
			}
			m.RecordRequest(r, info, rw.Status(), rw.Written(), time.Since(start))
		}()
		handler.ServeHTTP(rw, r)
	})
}

// RecordRequest records one finished request: its response code, the
// bytes of its body and how long it took. info may be nil. Non-resource
// requests other than the health endpoints and aggregated discovery are
// not recorded, as upstream instruments only those.
func (m *Metrics) RecordRequest(r *http.Request, info *request.RequestInfo, code int, size int64, elapsed time.Duration) {
	if m == nil {
		return
	}
	k, ok := requestKey(r, info)
	if !ok {
		return
	}
	s := m.seriesFor(k)
	m.counter(s, k, code).Inc()
	seconds := elapsed.Seconds()
	s.latency.Observe(seconds)
	// kapi has neither webhooks nor priority and fairness queues: the SLI
	// latency, which leaves them out, is the whole latency.
	s.sli.Observe(seconds)
	if s.size != nil {
		s.size.Observe(float64(size))
	}
	m.fieldValidation.seen(r.URL)
}

// longRunningGauge returns the apiserver_longrunning_requests child of a
// resource request.
func (m *Metrics) longRunningGauge(r *http.Request, info *request.RequestInfo) prometheus.Gauge {
	scope := Scope(info)
	return m.longRunning.WithLabelValues(reportedVerb(r, info, scope), info.APIGroup, info.APIVersion,
		info.Resource, info.Subresource, scope, Component)
}

// StatusRecorder is a ResponseWriter that remembers the status code. It keeps
// the wrapped writer reachable through Unwrap (so http.ResponseController
// finds its deadlines and flushing) and passes Flush and Hijack through.
type StatusRecorder struct {
	http.ResponseWriter
	code    int
	written int64
}

// WriteHeader records code and writes it.
func (s *StatusRecorder) WriteHeader(code int) {
	if s.code == 0 && code >= 200 || code == http.StatusSwitchingProtocols {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write writes b, recording an implicit 200.
func (s *StatusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.written += int64(n)
	return n, err
}

// Written returns the number of body bytes written.
func (s *StatusRecorder) Written() int64 { return s.written }

// Status returns the recorded code, 200 if none was written.
func (s *StatusRecorder) Status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// WroteHeader reports whether a final status code was sent.
func (s *StatusRecorder) WroteHeader() bool { return s.code != 0 }

// Unwrap returns the wrapped writer.
func (s *StatusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// FlushError flushes the wrapped writer if it can and returns its error,
// which http.ResponseController prefers to Flush: a watch handler learns of
// a broken or timed-out stream from it.
func (s *StatusRecorder) FlushError() error {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// Flush implements http.Flusher for callers that do not want the error.
func (s *StatusRecorder) Flush() { _ = s.FlushError() }

// Hijack hijacks the wrapped writer's connection if it can.
func (s *StatusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil && s.code == 0 {
		s.code = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}
