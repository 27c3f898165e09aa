package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/goldenhttp"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// TestNotReadyNegotiated checks the 503 answered before
// MuxAndDiscoveryComplete against kube-apiserver v1.37.2's answers (see
// testdata/negotiated/README.md): the Status in the media type Accept asks
// for, indented JSON when nothing acceptable is asked for, Retry-After: 5
// and no X-Content-Type-Options.
func TestNotReadyNegotiated(t *testing.T) {
	for suffix, accept := range goldenhttp.Accepts {
		name := "503-" + suffix
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/apis/foo.example.com/v1/bars", nil)
			req = req.WithContext(request.WithMuxIncomplete(req.Context()))
			req.Header.Set("User-Agent", "kubectl/v1.37.2")
			req.Header.Set("Accept", accept)
			rec := httptest.NewRecorder()
			NotFoundHandler().ServeHTTP(rec, req)

			goldenhttp.Check(t, "negotiated", name, rec)
		})
	}
}
