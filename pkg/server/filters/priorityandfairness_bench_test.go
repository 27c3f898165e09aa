package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// BenchmarkLimiter compares the filter APF replaces with APF itself, each
// behind the RequestInfo filter, in front of an empty handler: requests
// per second through the limiter alone, from every CPU (400+200 seats,
// kube's defaults).
func BenchmarkLimiter(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		b.Fatal(err)
	}
	withUser := func(h http.Handler) http.Handler {
		return withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), alice)))
		}))
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{
		{"max-in-flight", withUser(WithMaxInFlightLimit(noop, 400, 200, DefaultLongRunning, m, discard()))},
		{"apf", withUser(WithPriorityAndFairness(noop, PriorityAndFairness{Controller: apfEngine(600)}, DefaultLongRunning, discard()))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := httptest.NewRecorder()
					tc.h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil))
					if rec.Code != http.StatusOK {
						b.Fatalf("code %d", rec.Code)
					}
				}
			})
		})
	}
}
