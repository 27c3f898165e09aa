package discovery

import (
	"net/http"
	"testing"
)

// BenchmarkServe measures serving a cached document: no encoding per
// request.
func BenchmarkServe(b *testing.B) {
	h := newManager(b, Config{ExternalAddress: testExternalAddress}, allFixtures()...).Handler()
	for _, bc := range []struct{ name, path, accept string }{
		{"apis-aggregated-json", "/apis", acceptClientGo},
		{"apis-aggregated-protobuf", "/apis", acceptAggregatedPB},
		{"apis-legacy", "/apis", "application/json"},
		{"api-legacy", "/api", "application/json"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, _ := http.NewRequest(http.MethodGet, bc.path, nil)
			r.Header.Set("Accept", bc.accept)
			b.ReportAllocs()
			for b.Loop() {
				rec := newRecorder()
				h.ServeHTTP(rec, r)
				if rec.Code != http.StatusOK {
					b.Fatalf("got status %d", rec.Code)
				}
			}
		})
	}
}
