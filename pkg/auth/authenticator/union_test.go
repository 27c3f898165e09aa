package authenticator

import (
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func TestUnion(t *testing.T) {
	errA, errB := errors.New("a failed"), errors.New("b failed")
	fails := func(err error) Request {
		return RequestFunc(func(*http.Request) (*user.Info, bool, error) { return nil, false, err })
	}
	succeeds := func(name string) Request {
		return RequestFunc(func(*http.Request) (*user.Info, bool, error) { return &user.Info{Name: name}, true, nil })
	}
	abstains := fails(nil)

	tests := []struct {
		name     string
		list     []Request
		wantUser string
		wantErrs []error
	}{
		{name: "empty"},
		{name: "only nils", list: []Request{nil, nil}},
		{name: "all abstain", list: []Request{abstains, abstains}},
		{name: "first success wins", list: []Request{abstains, succeeds("one"), succeeds("two")}, wantUser: "one"},
		{name: "error before success is dropped", list: []Request{fails(errA), nil, succeeds("one")}, wantUser: "one"},
		{name: "errors joined when none succeeds", list: []Request{fails(errA), abstains, fails(errB)}, wantErrs: []error{errA, errB}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, ok, err := Union(tc.list...).AuthenticateRequest(httptest.NewRequest(http.MethodGet, "/", nil))
			for _, want := range tc.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("got error %v, want it to wrap %v", err, want)
				}
			}
			if len(tc.wantErrs) == 0 && err != nil {
				t.Errorf("got error %v, want none", err)
			}
			gotUser := ""
			if info != nil {
				gotUser = info.Name
			}
			if gotUser != tc.wantUser || ok != (tc.wantUser != "") {
				t.Errorf("got ok=%v user %q, want %q", ok, gotUser, tc.wantUser)
			}
		})
	}
}

// TestUnionRealAuthenticators combines the client-certificate and token
// authenticators the way the server does.
func TestUnionRealAuthenticators(t *testing.T) {
	b := testBundle(t)
	admin := parsePEM(t, b.AdminCertPEM)
	other := parsePEM(t, testBundle(t).AdminCertPEM)
	u := Union(NewX509(b.CAPool), NewTokenAuthenticator(map[string]*user.Info{"tok": {Name: user.APIServerUser}}))

	tests := []struct {
		name     string
		cert     *http.Request
		wantUser string
		wantErr  bool
	}{
		{name: "admin cert", cert: requestWith(admin), wantUser: "kubernetes-admin"},
		{name: "token without cert", cert: tokenReq(nil, "tok"), wantUser: user.APIServerUser},
		{name: "bad cert, good token", cert: tokenReq(other, "tok"), wantUser: user.APIServerUser},
		{name: "bad cert, bad token", cert: tokenReq(other, "nope"), wantErr: true},
		{name: "nothing", cert: httptest.NewRequest(http.MethodGet, "/", nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, ok, err := u.AuthenticateRequest(tc.cert)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got error %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, ErrInvalidBearerToken) {
				t.Errorf("error %v does not include the token failure", err)
			}
			got := ""
			if ok {
				got = info.Name
			}
			if got != tc.wantUser {
				t.Errorf("got user %q, want %q", got, tc.wantUser)
			}
		})
	}
}

func tokenReq(cert *x509.Certificate, token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if cert != nil {
		r = requestWith(cert)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}
