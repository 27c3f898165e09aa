package filters

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

var anonymous = &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}

// fixedAuthorizer answers the same for every request.
type fixedAuthorizer struct {
	d      authorizer.Decision
	reason string
	err    error
}

func (f fixedAuthorizer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return f.d, f.reason, f.err
}

func TestWithAuthorization(t *testing.T) {
	tests := []struct {
		name        string
		authz       authorizer.Authorizer
		u           *user.Info
		method      string
		target      string
		wantCode    int
		wantMessage string
		wantDetails metav1.StatusDetails
	}{
		{name: "anonymous non-resource", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/api",
			wantCode: 403, wantMessage: `forbidden: User "system:anonymous" cannot get path "/api"`},
		{name: "anonymous namespaced", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/api/v1/namespaces/default/pods/foo",
			wantCode: 403, wantMessage: `pods "foo" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace "default"`,
			wantDetails: metav1.StatusDetails{Name: "foo", Kind: "pods"}},
		{name: "anonymous cluster scope list", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/apis/apps/v1/deployments",
			wantCode: 403, wantMessage: `deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments" in API group "apps" at the cluster scope`,
			wantDetails: metav1.StatusDetails{Group: "apps", Kind: "deployments"}},
		{name: "subresource and reason", authz: fixedAuthorizer{d: authorizer.DecisionDeny, reason: "RBAC says <no>"}, u: alice, method: "GET",
			target:   "/api/v1/namespaces/ns/pods/p/log",
			wantCode: 403, wantMessage: `pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "ns": RBAC says <no>`,
			wantDetails: metav1.StatusDetails{Name: "p", Kind: "pods"}},
		{name: "anonymous healthz", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/healthz", wantCode: 200},
		{name: "anonymous readyz sub-path", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/readyz/etcd", wantCode: 200},
		{name: "anonymous livez", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/livez", wantCode: 200},
		{name: "anonymous version", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/version/", wantCode: 200},
		{name: "anonymous version sub-path", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/version/x", wantCode: 403,
			wantMessage: `forbidden: User "system:anonymous" cannot get path "/version/x"`},
		{name: "anonymous healthzfoo", authz: interim.Authorizer{}, u: anonymous, method: "GET", target: "/healthzfoo", wantCode: 403,
			wantMessage: `forbidden: User "system:anonymous" cannot get path "/healthzfoo"`},
		{name: "anonymous post healthz", authz: interim.Authorizer{}, u: anonymous, method: "POST", target: "/healthz", wantCode: 403,
			wantMessage: `forbidden: User "system:anonymous" cannot post path "/healthz"`},
		{name: "no user is anonymous", authz: interim.Authorizer{}, method: "GET", target: "/api", wantCode: 403,
			wantMessage: `forbidden: User "" cannot get path "/api"`},
		{name: "authenticated allowed", authz: interim.Authorizer{}, u: alice, method: "DELETE", target: "/api/v1/namespaces/ns/pods/p", wantCode: 200},
		{name: "allow wins over error", authz: fixedAuthorizer{d: authorizer.DecisionAllow, err: errors.New("partial")}, u: alice, method: "GET", target: "/api", wantCode: 200},
		{name: "error without allow", authz: fixedAuthorizer{d: authorizer.DecisionNoOpinion, err: errors.New("webhook down")}, u: alice, method: "GET", target: "/api", wantCode: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served := false
			inner := WithAuthorization(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), tt.authz, discard(), nil)
			h := withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.u != nil {
					r = r.WithContext(request.WithUser(r.Context(), tt.u))
				}
				inner.ServeHTTP(w, r)
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
			if rec.Code != tt.wantCode || served != (tt.wantCode == 200) {
				t.Fatalf("got %d served=%v, want %d", rec.Code, served, tt.wantCode)
			}
			if tt.wantCode != 403 {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatal(err)
			}
			wantMsg := tt.wantMessage // the reason is not HTML-escaped, as upstream
			if st.Message != wantMsg || st.Reason != metav1.StatusReasonForbidden || st.Code != 403 || st.Kind != "Status" {
				t.Errorf("got %s %q, want Forbidden %q", st.Reason, st.Message, wantMsg)
			}
			var gotDetails metav1.StatusDetails
			if st.Details != nil {
				gotDetails = *st.Details
			}
			if gotDetails.Name != tt.wantDetails.Name || gotDetails.Group != tt.wantDetails.Group || gotDetails.Kind != tt.wantDetails.Kind {
				t.Errorf("got details %+v, want %+v", gotDetails, tt.wantDetails)
			}
		})
	}
}
