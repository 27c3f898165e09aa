package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/goldenhttp"
)

// TestRootErrorsNegotiated checks NotFoundInRoot and
// MethodNotAllowedInRoot against kube-apiserver v1.37.2's answers (see
// testdata/negotiated/README.md): go-restful's service errors are written
// negotiated, without X-Content-Type-Options.
func TestRootErrorsNegotiated(t *testing.T) {
	cases := []struct {
		name, method, target string
		write                func(http.ResponseWriter, *http.Request)
	}{
		{"404root", http.MethodGet, "/api/v2", NotFoundInRoot},
		{"405root", http.MethodPost, "/api", MethodNotAllowedInRoot},
	}
	for _, tc := range cases {
		for suffix, accept := range goldenhttp.Accepts {
			name := tc.name + "-" + suffix
			t.Run(name, func(t *testing.T) {
				req := httptest.NewRequest(tc.method, tc.target, nil)
				req.Header.Set("User-Agent", "kubectl/v1.37.2")
				req.Header.Set("Accept", accept)
				rec := httptest.NewRecorder()
				tc.write(rec, req)

				goldenhttp.Check(t, "negotiated", name, rec)
			})
		}
	}
}
