package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	ok := func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("12345")) }
	tests := []struct {
		name    string
		method  string
		target  string
		header  http.Header
		handler http.HandlerFunc
		// want are the labels of the one apiserver_request_total series
		// expected ("" : none); wantSize says whether the response size
		// is observed.
		want     string
		wantSize bool
	}{
		{
			name: "namespaced get", method: "GET", target: "/api/v1/namespaces/ns/pods/p",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) },
			want:    `code="404",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"`, wantSize: true,
		},
		{
			name: "list is LIST with namespace scope", method: "GET", target: "/apis/apps/v1/namespaces/ns/deployments",
			handler: ok,
			want:    `code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",version="v1"`, wantSize: true,
		},
		{
			name: "HEAD of a collection is LIST", method: "HEAD", target: "/api/v1/configmaps",
			handler: ok,
			want:    `code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="cluster",subresource="",verb="LIST",version="v1"`, wantSize: true,
		},
		{
			name: "watch", method: "GET", target: "/api/v1/pods?watch=true",
			handler: func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() },
			want:    `code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"`, wantSize: true,
		},
		{
			name: "create is resource-scoped", method: "POST", target: "/api/v1/namespaces/ns/configmaps",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) },
			want:    `code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"`,
		},
		{
			name: "dry run", method: "POST", target: "/api/v1/namespaces/ns/configmaps?dryRun=All&dryRun=All",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) },
			want:    `code="201",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"`,
		},
		{
			name: "escaped dry run", method: "DELETE", target: "/api/v1/namespaces/ns/configmaps/c?dry%52un=%41ll",
			handler: ok,
			want:    `code="200",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="DELETE",version="v1"`,
		},
		{
			name: "invalid dry run", method: "DELETE", target: "/api/v1/namespaces/ns/configmaps?dryRun=All&dryRun=x",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) },
			want:    `code="400",component="apiserver",dry_run="invalid",group="",resource="configmaps",scope="namespace",subresource="",verb="DELETE",version="v1"`,
		},
		{
			name: "apply patch", method: "PATCH", target: "/api/v1/namespaces/ns/configmaps/c",
			header:  http.Header{"Content-Type": {"application/apply-patch+yaml"}},
			handler: func(w http.ResponseWriter, r *http.Request) {},
			want:    `code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"`,
		},
		{
			name: "connect subresource", method: "GET", target: "/api/v1/namespaces/ns/pods/p/log",
			handler: ok,
			want:    `code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="log",verb="CONNECT",version="v1"`,
		},
		{
			name: "unknown method", method: "OPTIONS", target: "/api/v1/namespaces",
			handler: ok,
			want:    `code="200",component="apiserver",dry_run="",group="",resource="namespaces",scope="cluster",subresource="",verb="other",version="v1"`,
		},
		{
			name: "health endpoint", method: "GET", target: "/healthz",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
			want:    `code="500",component="",dry_run="",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""`, wantSize: true,
		},
		{
			name: "aggregated discovery", method: "GET", target: "/apis",
			header:  http.Header{"Accept": {"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}},
			handler: ok,
			want:    `code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="apis",verb="GET",version=""`, wantSize: true,
		},
		// The OpenAPI v3 documents are recorded as kube-apiserver v1.37.2
		// records them (its /metrics, 2026-11-28): the discovery document
		// as "openapi/v3", every group-version's as "openapi/v3/".
		{
			name: "openapi v3 discovery", method: "GET", target: "/openapi/v3",
			handler: ok,
			want:    `code="200",component="",dry_run="",group="",resource="",scope="",subresource="openapi/v3",verb="GET",version=""`, wantSize: true,
		},
		{
			name: "openapi v3 group-version", method: "GET", target: "/openapi/v3/apis/apps/v1?hash=x",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) },
			want:    `code="304",component="",dry_run="",group="",resource="",scope="",subresource="openapi/v3/",verb="GET",version=""`, wantSize: true,
		},
		{name: "openapi v2 is not recorded", method: "GET", target: "/openapi/v2", handler: ok},
		{name: "legacy discovery is not recorded", method: "GET", target: "/apis", handler: ok},
		{name: "a health check is not recorded", method: "GET", target: "/readyz/ping", handler: ok},
		{name: "version is not recorded", method: "GET", target: "/version", handler: ok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := New(reg)
			if err != nil {
				t.Fatal(err)
			}
			h := withInfo(WithRequestMetrics(tt.handler, m, nil))
			req := httptest.NewRequest(tt.method, tt.target, nil)
			for k, v := range tt.header {
				req.Header[k] = v
			}
			h.ServeHTTP(httptest.NewRecorder(), req)

			series := gather(t, reg, "apiserver_request_total")
			if tt.want == "" {
				if len(series) != 0 {
					t.Errorf("got series %q, want none", series)
				}
				return
			}
			if len(series) != 1 || series[0] != tt.want+" 1" {
				t.Errorf("got series %q, want [%q]", series, tt.want+" 1")
			}
			// Every request, watches included, has one latency and one
			// SLI latency observation under the labels without code.
			withoutCode := tt.want[strings.Index(tt.want, ",")+1:]
			if got := gather(t, reg, "apiserver_request_duration_seconds"); len(got) != 1 || got[0] != withoutCode+" 1" {
				t.Errorf("got latency series %q, want [%q]", got, withoutCode+" 1")
			}
			noDryRun := strings.Replace(withoutCode, `dry_run="`+labelValue(tt.want, "dry_run")+`",`, "", 1)
			if got := gather(t, reg, "apiserver_request_sli_duration_seconds"); len(got) != 1 || got[0] != noDryRun+" 1" {
				t.Errorf("got SLI series %q, want [%q]", got, noDryRun+" 1")
			}
			sizes := gather(t, reg, "apiserver_response_sizes")
			switch {
			case tt.wantSize && (len(sizes) != 1 || sizes[0] != noDryRun+" 1"):
				t.Errorf("got size series %q, want [%q]", sizes, noDryRun+" 1")
			case !tt.wantSize && len(sizes) != 0:
				t.Errorf("got size series %q, want none", sizes)
			}
		})
	}
}

// labelValue returns the value of label name in series labels s.
func labelValue(s, name string) string {
	_, rest, _ := strings.Cut(s, name+`="`)
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

func TestResponseSizeAndCodes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	code := 200
	h := withInfo(WithRequestMetrics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		_, _ = w.Write(make([]byte, 1500))
		_, _ = w.Write(make([]byte, 500))
	}), m, nil))
	for _, c := range []int{200, 200, 404, 200} {
		code = c
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps/c", nil))
	}
	codes := gather(t, reg, "apiserver_request_total")
	if len(codes) != 2 || labelValue(codes[0], "code") != "200" || !strings.HasSuffix(codes[0], " 3") ||
		labelValue(codes[1], "code") != "404" || !strings.HasSuffix(codes[1], " 1") {
		t.Errorf("got %q, want code 200 three times and 404 once", codes)
	}
	h2 := histogram(t, reg, "apiserver_response_sizes")
	if h2.GetSampleCount() != 4 || h2.GetSampleSum() != 4*2000 {
		t.Errorf("got %d sizes summing to %g, want 4 summing to 8000", h2.GetSampleCount(), h2.GetSampleSum())
	}
	// 2000 bytes: above the 1000 bucket, within the 10000 one.
	if b := h2.GetBucket(); b[0].GetCumulativeCount() != 0 || b[1].GetCumulativeCount() != 4 {
		t.Errorf("got buckets %v, want 0 ≤ 1000 and 4 ≤ 10000", b)
	}
}

func TestLongRunningGauge(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	inside := make(chan struct{})
	release := make(chan struct{})
	h := withInfo(WithRequestMetrics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "" {
			close(inside)
			<-release
		}
	}), m, func(r *http.Request, info *request.RequestInfo) bool { return request.IsLongRunning(info) }))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil))
	}()
	<-inside
	want := `component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"`
	if got := gather(t, reg, "apiserver_longrunning_requests"); len(got) != 1 || got[0] != want+" 1" {
		t.Errorf("during the watch: got %q, want [%q]", got, want+" 1")
	}
	close(release)
	<-done
	if got := gather(t, reg, "apiserver_longrunning_requests"); len(got) != 1 || got[0] != want+" 0" {
		t.Errorf("after the watch: got %q, want [%q]", got, want+" 0")
	}
	// A short request is not long-running.
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps/c", nil))
	if got := gather(t, reg, "apiserver_longrunning_requests"); len(got) != 1 {
		t.Errorf("got %q, want only the watch's series", got)
	}
}

func TestWatchEvents(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := m.WatchEvents(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	r.Sent(100)
	r.Sent(3000)
	want := `group="apps",kind="Deployment",version="v1"`
	if got := gather(t, reg, "apiserver_watch_events_total"); len(got) != 1 || got[0] != want+" 2" {
		t.Errorf("got %q, want [%q]", got, want+" 2")
	}
	hist := histogram(t, reg, "apiserver_watch_events_sizes")
	if hist.GetSampleCount() != 2 || hist.GetSampleSum() != 3100 || hist.GetBucket()[0].GetCumulativeCount() != 1 {
		t.Errorf("got %v, want 2 sizes summing to 3100, one ≤ 1024", hist)
	}
	var none *Metrics
	none.WatchEvents(schema.GroupVersionKind{}).Sent(1) // records nothing, no panic
}

// histogram returns the one histogram of family name.
func histogram(t *testing.T, reg *prometheus.Registry, name string) *dto.Histogram {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	t.Fatalf("no single %s series", name)
	return nil
}

func TestWithRequestMetricsPanic(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := withInfo(WithRequestMetrics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), m, nil))
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("got panic %v, want boom", p)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods", nil))
	}()
	want := `code="500",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1" 1`
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
	m.RecordRequest(httptest.NewRequest("GET", "/", nil), nil, 200, 0, 0)
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

func TestRecordConcurrently(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	res := request.NewResolver()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				r := httptest.NewRequest("GET", fmt.Sprintf("/api/v1/namespaces/ns%d/configmaps", i%3), nil)
				info, _ := res.Resolve(r)
				m.RecordRequest(r, info, 200+g%2*204, 10, time.Millisecond)
			}
		})
	}
	wg.Wait()
	var total float64
	for _, s := range gather(t, reg, "apiserver_request_total") {
		var v float64
		_, _ = fmt.Sscanf(s[strings.LastIndex(s, " ")+1:], "%g", &v)
		total += v
	}
	if total != 8*200 {
		t.Errorf("got %g requests counted, want %d", total, 8*200)
	}
	if got := gather(t, reg, "apiserver_request_total"); len(got) != 2 {
		t.Errorf("got %d series, want 2 (codes 200 and 404)", len(got))
	}
}

// flushErrorWriter is a ResponseWriter whose flushes fail, as a closed
// connection's do.
type flushErrorWriter struct {
	*httptest.ResponseRecorder
	err error
}

func (w flushErrorWriter) FlushError() error { return w.err }

// TestStatusRecorderPassesFlushErrors: a flush through the recorder returns
// the wrapped writer's error (http.ResponseController prefers FlushError).
func TestStatusRecorderPassesFlushErrors(t *testing.T) {
	broken := errors.New("connection gone")
	rec := &StatusRecorder{ResponseWriter: flushErrorWriter{httptest.NewRecorder(), broken}}
	if err := http.NewResponseController(rec).Flush(); !errors.Is(err, broken) {
		t.Fatalf("Flush returned %v, want %v", err, broken)
	}
	if rec.Status() != http.StatusOK {
		t.Errorf("status after a flush: %d, want 200", rec.Status())
	}
}
