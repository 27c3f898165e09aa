package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// BenchmarkWithRequestMetrics measures what the request-metrics filter adds
// to one request (the handler does nothing): labels, counters, histograms
// and the status recorder. Run with -benchmem; the "none" case is the
// filter-less baseline.
func BenchmarkWithRequestMetrics(b *testing.B) {
	cases := []struct {
		name, method, target string
	}{
		{"get", http.MethodGet, "/api/v1/namespaces/default/configmaps/c1"},
		{"list", http.MethodGet, "/apis/apps/v1/namespaces/default/deployments"},
		{"create-dryrun", http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All"},
		{"healthz", http.MethodGet, "/healthz"},
	}
	for _, tc := range cases {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		info, err := request.NewResolver().Resolve(req)
		if err != nil {
			b.Fatal(err)
		}
		req = req.WithContext(request.WithRequestInfo(req.Context(), info))
		ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("{}"))
		})
		b.Run(tc.name, func(b *testing.B) {
			m, err := New(prometheus.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			h := withMetricsForBench(ok, m)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
	b.Run("none", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/c1", nil)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("{}"))
		})
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, req)
		}
	})
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

func withMetricsForBench(h http.Handler, m *Metrics) http.Handler {
	return WithRequestMetrics(h, m, nil)
}
