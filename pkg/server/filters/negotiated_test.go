package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/goldenhttp"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// TestErrorsNegotiated checks the errors the filters write against
// kube-apiserver v1.37.2's answers to the same requests (see
// testdata/negotiated/README.md): the Status in JSON, YAML or protobuf as
// Accept asks, indented JSON when nothing acceptable is asked for, and
// X-Content-Type-Options only on the 403s and impersonation errors.
func TestErrorsNegotiated(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	bob := &user.Info{Name: "bob", Groups: []string{user.AllAuthenticated}}
	admin := &user.Info{Name: "admin", Groups: []string{"system:masters", user.AllAuthenticated}}
	deny := fixedAuthorizer{d: authorizer.DecisionNoOpinion}
	const pods = "/api/v1/namespaces/default/pods"
	cases := []struct {
		name    string
		h       http.Handler
		u       *user.Info // nil: none in the context
		target  string
		headers map[string]string
	}{
		{name: "401", h: WithAuthentication(ok, tokenAuthenticator{}, Unauthorized(), discard(), nil), target: pods,
			headers: map[string]string{"Authorization": "Bearer badtoken"}},
		{name: "403", h: WithAuthorization(ok, deny, discard(), nil), u: bob, target: pods},
		{name: "imp400", h: WithImpersonation(ok, deny, discard(), nil), u: admin, target: pods,
			headers: map[string]string{"Impersonate-Group": "foo"}},
		{name: "imp403", h: WithImpersonation(ok, deny, discard(), nil), u: bob, target: pods,
			headers: map[string]string{"Impersonate-User": "alice"}},
		{name: "timeout", h: WithRequestDeadline(ok, time.Minute, DefaultLongRunning, discard()), u: admin, target: pods + "?timeout=bad"},
	}
	for _, tc := range cases {
		for suffix, accept := range goldenhttp.Accepts {
			name := tc.name + "-" + suffix
			t.Run(name, func(t *testing.T) {
				h := withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.u != nil {
						r = r.WithContext(request.WithUser(r.Context(), tc.u))
					}
					tc.h.ServeHTTP(w, r)
				}))
				req := httptest.NewRequest(http.MethodGet, tc.target, nil)
				req.Header.Set("User-Agent", "kubectl/v1.37.2")
				req.Header.Set("Accept", accept)
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				goldenhttp.Check(t, "negotiated", name, rec)
			})
		}
	}
}

// BenchmarkForbiddenWritten measures the 403 the authorization filter
// writes for a denied request (JSON asked for), the most frequent of the
// negotiated filter errors.
func BenchmarkForbiddenWritten(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	bob := &user.Info{Name: "bob", Groups: []string{user.AllAuthenticated}}
	authz := WithAuthorization(ok, fixedAuthorizer{d: authorizer.DecisionNoOpinion}, discard(), nil)
	h := withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), bob)))
	}))
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/pods", nil)
	req.Header.Set("Accept", "application/json")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			b.Fatal(rec.Code)
		}
	}
}
