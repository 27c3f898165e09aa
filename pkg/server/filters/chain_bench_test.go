package filters

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
)

// BenchmarkChainGet serves a GET of one custom resource through the whole
// filter chain as kapi builds it without auditing (token authentication,
// authorization, max-in-flight, timeout, metrics, ...), to a handler that
// writes a small JSON body: what every request pays in the filters, without
// the network, HTTP/2 or the handler's own work.
func BenchmarkChainGet(b *testing.B) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	body := []byte(`{"apiVersion":"bench.kapi.dev/v1","kind":"BenchThing","metadata":{"name":"t00001","namespace":"bench"}}`)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	h := BuildChain(api, ChainConfig{
		Logger:                         discard(),
		MuxAndDiscoveryComplete:        done,
		NonLongRunningRequestWaitGroup: &SafeWaitGroup{},
		WatchDrainer:                   NewWatchDrainer(),
		RequestTimeout:                 time.Minute,
		Authenticator:                  tokenAuthenticator{"good": alice},
		MaxRequestsInFlight:            400,
		MaxMutatingRequestsInFlight:    200,
		Authorizer:                     interim.Authorizer{},
		Metrics:                        m,
	})
	req := httptest.NewRequest("GET", "/apis/bench.kapi.dev/v1/namespaces/bench/benchthings/t00001", nil)
	req.Header.Set("Authorization", "Bearer good")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kapi-bench")
	b.ReportAllocs()
	for b.Loop() {
		r := req.Clone(req.Context())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("got %d: %s", w.Code, w.Body)
		}
		_, _ = io.Copy(io.Discard, w.Body)
	}
}
