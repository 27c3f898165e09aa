package metrics

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestNewRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatalf("first New: %v", err)
	}
	if _, err := New(reg); err == nil {
		t.Errorf("second New on the same registry: got nil error, want one")
	}
	if _, err := New(nil); err != nil {
		t.Errorf("New(nil): %v", err)
	}
}

func TestWithRequestMetrics(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		target  string
		header  http.Header
		handler http.HandlerFunc
		want    string // labels of the one apiserver_request_total series expected
	}{
		{
			name: "namespaced get", method: "GET", target: "/api/v1/namespaces/ns/pods/p",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) },
			want:    `code="404",component="apiserver",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"`,
		},
		{
			name: "list is LIST with namespace scope", method: "GET", target: "/apis/apps/v1/namespaces/ns/deployments",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("x")) },
			want:    `code="200",component="apiserver",group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",version="v1"`,
		},
		{
			name: "watch", method: "GET", target: "/api/v1/pods?watch=true",
			handler: func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() },
			want:    `code="200",component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"`,
		},
		{
			name: "apply patch", method: "PATCH", target: "/api/v1/namespaces/ns/configmaps/c",
			header:  http.Header{"Content-Type": {"application/apply-patch+yaml"}},
			handler: func(w http.ResponseWriter, r *http.Request) {},
			want:    `code="200",component="apiserver",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"`,
		},
		{
			name: "non-resource", method: "GET", target: "/healthz",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
			want:    `code="500",component="apiserver",group="",resource="",scope="",subresource="",verb="GET",version=""`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := New(reg)
			if err != nil {
				t.Fatal(err)
			}
			h := withInfo(WithRequestMetrics(tt.handler, m))
			req := httptest.NewRequest(tt.method, tt.target, nil)
			for k, v := range tt.header {
				req.Header[k] = v
			}
			h.ServeHTTP(httptest.NewRecorder(), req)

			series := gather(t, reg, "apiserver_request_total")
			if len(series) != 1 || series[0] != tt.want+" 1" {
				t.Errorf("got series %q, want [%q]", series, tt.want+" 1")
			}
			wantHist := 1
			if strings.Contains(tt.want, `verb="WATCH"`) {
				wantHist = 0
			}
			if got := len(gather(t, reg, "apiserver_request_duration_seconds")); got != wantHist {
				t.Errorf("got %d latency series, want %d", got, wantHist)
			}
		})
	}
}

func TestWithRequestMetricsPanic(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := withInfo(WithRequestMetrics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), m))
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("got panic %v, want boom", p)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods", nil))
	}()
	want := `code="500",component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1" 1`
	if got := gather(t, reg, "apiserver_request_total"); len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want [%q]", got, want)
	}
}

func TestStatusRecorderPassThrough(t *testing.T) {
	// A real server connection supports Hijack and Flush; the recorder must
	// pass both through.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &StatusRecorder{ResponseWriter: w}
		if _, ok := any(rec).(http.Flusher); !ok {
			t.Errorf("recorder is not a Flusher")
		}
		if err := http.NewResponseController(rec).SetWriteDeadline(time.Time{}); err != nil {
			t.Errorf("ResponseController through Unwrap: %v", err)
		}
		var hj http.Hijacker = rec
		conn, brw, err := hj.Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
		_ = brw.Flush()
		if got := rec.Status(); got != http.StatusSwitchingProtocols {
			t.Errorf("got status %d after hijack, want 101", got)
		}
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("got %d, want 204", resp.StatusCode)
	}
}

func TestMetricsNilSafe(t *testing.T) {
	var m *Metrics
	m.SetInflight(ReadOnlyKind, 3)
	m.TLSHandshakeError()
	m.RecordRequest(httptest.NewRequest("GET", "/", nil), nil, 200, 0)
}

func TestInflightAndTLS(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.SetInflight(MutatingKind, 7)
	m.TLSHandshakeError()
	wantInflight := []string{`request_kind="mutating" 7`, `request_kind="readOnly" 0`}
	if got := gather(t, reg, "apiserver_current_inflight_requests"); strings.Join(got, ";") != strings.Join(wantInflight, ";") {
		t.Errorf("got %q, want %q", got, wantInflight)
	}
	if got := gather(t, reg, "apiserver_tls_handshake_errors_total"); len(got) != 1 || got[0] != " 1" {
		t.Errorf("got %q, want [\" 1\"]", got)
	}
}

// withInfo adds the RequestInfo the real chain would have resolved.
func withInfo(h http.Handler) http.Handler {
	res := request.NewResolver()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := res.Resolve(r)
		if err != nil {
			panic(err)
		}
		h.ServeHTTP(w, r.WithContext(request.WithRequestInfo(r.Context(), info)))
	})
}

// gather returns the series of family name as `l1="v1",l2="v2" value`
// (labels sorted by name; histograms report their sample count).
func gather(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			out = append(out, formatSeries(m))
		}
	}
	return out
}

func formatSeries(m *dto.Metric) string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	var v float64
	switch {
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Histogram != nil:
		v = float64(m.GetHistogram().GetSampleCount())
	}
	return fmt.Sprintf("%s %g", strings.Join(labels, ","), v)
}
