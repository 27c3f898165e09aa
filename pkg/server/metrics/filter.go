package metrics

import (
	"bufio"
	"net"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithRequestMetrics counts each request and observes its latency when it
// finishes (for a panic, with code 500 unless a code was already written;
// the panic goes on). The RequestInfo filter must run before it.
func WithRequestMetrics(handler http.Handler, m *Metrics) http.Handler {
	if m == nil {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if ts, ok := request.ReceivedTimestampFrom(r.Context()); ok {
			start = ts
		}
		info, _ := request.RequestInfoFrom(r.Context())
		rw := &StatusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				code := rw.Status()
				if !rw.WroteHeader() {
					code = http.StatusInternalServerError
				}
				m.RecordRequest(r, info, code, time.Since(start))
				panic(p)
			}
			m.RecordRequest(r, info, rw.Status(), time.Since(start))
		}()
		handler.ServeHTTP(rw, r)
	})
}

// StatusRecorder is a ResponseWriter that remembers the status code. It keeps
// the wrapped writer reachable through Unwrap (so http.ResponseController
// finds its deadlines and flushing) and passes Flush and Hijack through.
type StatusRecorder struct {
	http.ResponseWriter
	code int
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
	return s.ResponseWriter.Write(b)
}

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

// Flush flushes the wrapped writer if it can.
func (s *StatusRecorder) Flush() {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// Hijack hijacks the wrapped writer's connection if it can.
func (s *StatusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil && s.code == 0 {
		s.code = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}
