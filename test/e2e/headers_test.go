package e2e

import (
	"net/http"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestCORSAndHSTSFlags: --cors-allowed-origins answers CORS (and
// preflights) for matching origins only, --strict-transport-security-directives
// adds the HSTS header to every response.
func TestCORSAndHSTSFlags(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.CORSAllowedOrigins = []string{`^https://ui\.example\.com$`}
		o.HSTSDirectives = []string{"max-age=31536000", "includeSubDomains"}
	}))
	client, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.Config.Host+"/api/v1/namespaces", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := do(http.MethodGet, "https://ui.example.com")
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "https://ui.example.com" || res.StatusCode != http.StatusOK {
		t.Errorf("allowed origin: got %d Access-Control-Allow-Origin %q, want 200 and the origin", res.StatusCode, got)
	}
	if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000; includeSubDomains" {
		t.Errorf("got Strict-Transport-Security %q, want max-age=31536000; includeSubDomains", got)
	}
	if res := do(http.MethodOptions, "https://ui.example.com"); res.StatusCode != http.StatusNoContent {
		t.Errorf("preflight: got %d, want 204", res.StatusCode)
	}
	if got := do(http.MethodGet, "https://evil.example.com").Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("other origin: got Access-Control-Allow-Origin %q, want none", got)
	}
}
