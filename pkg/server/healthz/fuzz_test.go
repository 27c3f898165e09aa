package healthz

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzAggregateQuery throws arbitrary raw queries at the aggregate and
// single-check handlers: no panics, only 200 or 500, and the body has one
// of the two documented shapes.
func FuzzAggregateQuery(f *testing.F) {
	for _, seed := range []string{
		"", "verbose", "verbose=0", "verbose=false", "exclude=etcd", "exclude=etcd&exclude=log",
		"exclude=a,b", "exclude=&verbose", "exclude=%zz", "exclude=%22&verbose", "a;b=c", "exclude=etcd;verbose",
		"exclude=shutdown&exclude=shutdown&verbose", "exclude=kms&exclude=etcd-readiness", "%", "&&&=&=", "exclude=\x00",
	} {
		f.Add(seed)
	}
	checks := []HealthChecker{
		PingHealthz,
		NamedGroupedCheck("etcd", "etcd", func(*http.Request) error { return nil }),
		NamedGroupedCheck("etcd-override-0", "etcd", func(*http.Request) error { return nil }),
		NamedGroupedCheck("kms-provider-0", "kms", func(*http.Request) error { return errNotFinished }),
		failing("shutdown", "process is shutting down"),
	}
	mux := mapMux{}
	InstallPathHandler(mux, "/readyz", HandlerOptions{Logger: testLogger(io.Discard)}, checks...)

	f.Fuzz(func(t *testing.T, rawQuery string) {
		for _, path := range []string{"/readyz", "/readyz/shutdown", "/readyz/ping"} {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL = &url.URL{Path: path, RawQuery: rawQuery}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			body := rec.Body.String()
			switch rec.Code {
			case http.StatusOK:
				if path == "/readyz/shutdown" {
					t.Fatalf("%s?%s: got 200, want 500", path, rawQuery)
				}
				if body != "ok" && !strings.HasSuffix(body, "readyz check passed\n") {
					t.Fatalf("%s?%s: 200 with body %q", path, rawQuery, body)
				}
			case http.StatusInternalServerError:
				if path == "/readyz/ping" {
					t.Fatalf("%s?%s: got 500, want 200", path, rawQuery)
				}
				if !strings.HasSuffix(body, "readyz check failed\n") && !strings.HasPrefix(body, "internal server error: ") {
					t.Fatalf("%s?%s: 500 with body %q", path, rawQuery, body)
				}
				if strings.Contains(body, "reason withheld") && strings.Contains(body, "process is shutting down") {
					t.Fatalf("%s?%s: aggregate body leaks the reason: %q", path, rawQuery, body)
				}
			default:
				t.Fatalf("%s?%s: got status %d, want 200 or 500", path, rawQuery, rec.Code)
			}
		}
	})
}
