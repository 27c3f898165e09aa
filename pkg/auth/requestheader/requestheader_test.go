package requestheader

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/user"

	"github.com/kapi-dev/kapi/pkg/auth/internal/certtest"
)

func TestAuthenticateRequest(t *testing.T) {
	f := newFixture(t)
	fpPool := f.bundle.FrontProxyCAPool
	otherPool := x509.NewCertPool()
	otherPool.AddCert(f.otherRoot.Cert)

	otherCAProxy := certtest.Issue(t, clientTemplate(pki.FrontProxyClientName), f.otherRoot).TLS()
	wrongCN := certtest.Issue(t, clientTemplate("not-the-proxy"), f.fpCA).TLS()
	serverOnlyTmpl := clientTemplate(pki.FrontProxyClientName)
	serverOnlyTmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serverOnly := certtest.Issue(t, serverOnlyTmpl, f.fpCA).TLS()
	expiredTmpl := clientTemplate(pki.FrontProxyClientName)
	expiredTmpl.NotBefore, expiredTmpl.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	expired := certtest.Issue(t, expiredTmpl, f.fpCA).TLS()
	chained := certtest.Issue(t, clientTemplate("chained-proxy"), f.otherInter)

	def := DefaultConfig(fpPool)
	anyName := def
	anyName.AllowedNames = nil
	twoEach := def
	twoEach.UsernameHeaders = []string{"X-Remote-User", " X-Other-User "}
	twoEach.UIDHeaders = []string{"X-Remote-Uid", "X-Other-Uid"}
	twoEach.GroupHeaders = []string{"X-Remote-Group", "X-Other-Group"}
	twoEach.ExtraHeaderPrefixes = []string{"X-Remote-Extra-", "X-Other-Extra-"}
	otherRoots := Config{ClientCA: otherPool, UsernameHeaders: []string{"X-Remote-User"}}

	basic := hdr("X-Remote-User", "alice", "X-Remote-Group", "devs", "X-Keep", "yes")
	kept := http.Header{"X-Keep": {"yes"}}

	tests := []struct {
		name   string
		cfg    Config
		cert   *tls.Certificate
		header http.Header
		want   *user.Info // nil: not authenticated
		// wantErr is a substring of the error; empty means no error.
		wantErr string
		// wantLeft are the X-Remote-*, X-Other-* and X-Keep headers
		// after authentication.
		wantLeft http.Header
	}{
		{
			name:     "trusted proxy with allowed name",
			cfg:      def,
			cert:     f.proxy,
			header:   basic,
			want:     &user.Info{Name: "alice", Groups: []string{"devs", user.AllAuthenticated}},
			wantLeft: kept,
		},
		{
			name:     "untrusted certificate (other CA) is refused, headers ignored",
			cfg:      def,
			cert:     otherCAProxy,
			header:   basic,
			wantErr:  "certificate signed by unknown authority",
			wantLeft: basic,
		},
		{
			name:     "cluster CA client certificate is not a proxy",
			cfg:      def,
			cert:     f.admin,
			header:   basic,
			wantErr:  "requestheader: proxy certificate: verifying certificate SN=",
			wantLeft: basic,
		},
		{
			name:     "allowed names mismatch",
			cfg:      def,
			cert:     wrongCN,
			header:   basic,
			wantErr:  "x509: subject with cn=not-the-proxy is not in the allowed list",
			wantLeft: basic,
		},
		{
			name:     "no allowed names: any name the CA signed",
			cfg:      anyName,
			cert:     wrongCN,
			header:   basic,
			want:     &user.Info{Name: "alice", Groups: []string{"devs", user.AllAuthenticated}},
			wantLeft: kept,
		},
		{
			name:     "certificate without client auth usage",
			cfg:      def,
			cert:     serverOnly,
			header:   basic,
			wantErr:  "incompatible key usage",
			wantLeft: basic,
		},
		{
			name:     "expired certificate",
			cfg:      def,
			cert:     expired,
			header:   basic,
			wantErr:  "expired",
			wantLeft: basic,
		},
		{
			name:     "no certificate",
			cfg:      def,
			header:   basic,
			wantLeft: basic,
		},
		{
			name:     "intermediate sent by the proxy",
			cfg:      otherRoots,
			cert:     chained.TLS(f.otherInter),
			header:   basic,
			want:     &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}},
			wantLeft: hdr("X-Remote-Group", "devs", "X-Keep", "yes"), // not a configured group header
		},
		{
			name:     "intermediate not sent",
			cfg:      otherRoots,
			cert:     chained.TLS(),
			header:   basic,
			wantErr:  "unknown authority",
			wantLeft: basic,
		},
		{
			name:     "username header missing",
			cfg:      def,
			cert:     f.proxy,
			header:   hdr("X-Remote-Group", "devs", "X-Remote-Extra-Scopes", "s"),
			wantLeft: hdr("X-Remote-Group", "devs", "X-Remote-Extra-Scopes", "s"),
		},
		{
			name:     "username header empty",
			cfg:      def,
			cert:     f.proxy,
			header:   hdr("X-Remote-User", "", "X-Remote-Group", "devs"),
			wantLeft: hdr("X-Remote-User", "", "X-Remote-Group", "devs"),
		},
		{
			name:   "first non-empty username header wins; first line of each",
			cfg:    twoEach,
			cert:   f.proxy,
			header: hdr("X-Remote-User", "", "X-Remote-User", "ignored-second-line", "X-Other-User", "bob", "X-Other-User", "carol"),
			want:   &user.Info{Name: "bob", Groups: []string{user.AllAuthenticated}},
		},
		{
			name:   "earlier username header wins over later",
			cfg:    twoEach,
			cert:   f.proxy,
			header: hdr("X-Other-User", "bob", "X-Remote-User", "alice"),
			want:   &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}},
		},
		{
			name: "multiple group headers and lines, values as-is",
			cfg:  twoEach,
			cert: f.proxy,
			header: hdr("X-Remote-User", "alice",
				"X-Other-Group", "o1",
				"X-Remote-Group", "a, b",
				"X-Remote-Group", "",
				"X-Remote-Group", "c",
				"X-Other-Group", "o2"),
			want: &user.Info{Name: "alice", Groups: []string{"a, b", "c", "o1", "o2", user.AllAuthenticated}},
		},
		{
			name:     "uid",
			cfg:      twoEach,
			cert:     f.proxy,
			header:   hdr("X-Remote-User", "alice", "X-Remote-Uid", "", "X-Other-Uid", "u-1", "X-Keep", "yes"),
			want:     &user.Info{Name: "alice", UID: "u-1", Groups: []string{user.AllAuthenticated}},
			wantLeft: kept,
		},
		{
			name: "extra headers decoded",
			cfg:  twoEach,
			cert: f.proxy,
			header: hdr("X-Remote-User", "alice",
				"X-Remote-Extra-Scopes", "view",
				"X-Remote-Extra-Scopes", "edit",
				"X-Remote-Extra-Example.com%2Fkey%25", "v1",
				"X-Remote-Extra-example.com%2fkey%25", "v2",
				"X-Remote-Extra-With%20Space", "",
				"X-Remote-Extra-%C3%BCnicode", "ü",
				"X-Remote-Extra-Bad%zz", "kept-raw",
				"X-Other-Extra-Scopes", "other",
				"X-Keep", "yes"),
			want: &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}, Extra: map[string][]string{
				"scopes":           {"view", "edit", "other"},
				"example.com/key%": {"v1", "v2"},
				"with space":       {""},
				"ünicode":          {"ü"},
				"bad%zz":           {"kept-raw"},
			}},
			wantLeft: kept,
		},
		{
			name:   "already authenticated group not added twice",
			cfg:    def,
			cert:   f.proxy,
			header: hdr("X-Remote-User", "alice", "X-Remote-Group", user.AllAuthenticated, "X-Remote-Group", "devs"),
			want:   &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated, "devs"}},
		},
		{
			name:   "anonymous stays anonymous",
			cfg:    def,
			cert:   f.proxy,
			header: hdr("X-Remote-User", user.Anonymous, "X-Remote-Group", user.AllUnauthenticated),
			want:   &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := f.do(t, mustNew(t, tc.cfg), tc.cert, tc.header)
			if tc.wantErr == "" && got.err != nil {
				t.Fatalf("got error %v, want none", got.err)
			}
			if tc.wantErr != "" && (got.err == nil || !strings.Contains(got.err.Error(), tc.wantErr)) {
				t.Fatalf("got error %v, want one containing %q", got.err, tc.wantErr)
			}
			if got.ok != (tc.want != nil) {
				t.Fatalf("got ok %v (user %+v), want %v", got.ok, got.user, tc.want != nil)
			}
			if diff := cmp.Diff(tc.want, got.user, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("user mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLeft, remote(got.left), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("headers left after authentication (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnionWithX509 checks the two CAs stay separate when both
// authenticators run, as kapi chains them.
func TestUnionWithX509(t *testing.T) {
	f := newFixture(t)
	rh := mustNew(t, DefaultConfig(f.bundle.FrontProxyCAPool))
	union := authenticator.Union(rh, authenticator.NewX509(f.bundle.CAPool))
	x509Only := authenticator.NewX509(f.bundle.CAPool)

	tests := []struct {
		name     string
		auth     authenticator.Request
		cert     *tls.Certificate
		header   http.Header
		wantName string // empty: not authenticated
		wantErr  bool
	}{
		{name: "proxy via union", auth: union, cert: f.proxy, header: hdr("X-Remote-User", "alice"), wantName: "alice"},
		{name: "admin via union ignores headers", auth: union, cert: f.admin, header: hdr("X-Remote-User", "alice"), wantName: pki.AdminUser},
		{name: "proxy certificate is not an x509 user", auth: x509Only, cert: f.proxy, wantErr: true},
		{name: "proxy without username header is nobody", auth: union, cert: f.proxy, wantErr: true},
		{name: "no certificate", auth: union, header: hdr("X-Remote-User", "alice")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := f.do(t, tc.auth, tc.cert, tc.header)
			if (got.err != nil) != tc.wantErr {
				t.Fatalf("got error %v, want error %v", got.err, tc.wantErr)
			}
			name := ""
			if got.ok {
				name = got.user.Name
			}
			if name != tc.wantName {
				t.Errorf("got user %q, want %q", name, tc.wantName)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	pool := x509.NewCertPool()
	tests := []struct {
		name    string
		cfg     Config
		wantErr []string // substrings; none means valid
	}{
		{name: "default", cfg: DefaultConfig(pool)},
		{name: "no uid headers", cfg: Config{ClientCA: pool, UsernameHeaders: []string{"X-Remote-User"}}},
		{name: "uid header lower case", cfg: Config{ClientCA: pool, UsernameHeaders: []string{"X-Remote-User"}, UIDHeaders: []string{"x-remote-uid", "X-Id"}}},
		{name: "no CA", cfg: Config{UsernameHeaders: []string{"X-Remote-User"}}, wantErr: []string{"client CA is required"}},
		{name: "no username header", cfg: Config{ClientCA: pool}, wantErr: []string{"username header is required"}},
		{name: "blank group header", cfg: Config{ClientCA: pool, UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{" "}},
			wantErr: []string{`empty header " " in requestheader-group-headers`}},
		{name: "uid headers without the standard one", cfg: Config{ClientCA: pool, UsernameHeaders: []string{"X-Remote-User"}, UIDHeaders: []string{"X-Id"}},
			wantErr: []string{"without specifying the standard X-Remote-Uid header"}},
		{name: "all at once", cfg: Config{UsernameHeaders: []string{""}, ExtraHeaderPrefixes: []string{""}},
			wantErr: []string{"client CA is required", "requestheader-username-headers", "requestheader-extra-headers-prefix"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.cfg)
			if len(tc.wantErr) == 0 {
				if err != nil || a == nil {
					t.Fatalf("got %v, %v, want an authenticator", a, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got no error, want %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	pool := x509.NewCertPool()
	got := DefaultConfig(pool)
	want := Config{
		ClientCA:            pool,
		AllowedNames:        []string{"front-proxy-client"},
		UsernameHeaders:     []string{"X-Remote-User"},
		UIDHeaders:          []string{"X-Remote-Uid"},
		GroupHeaders:        []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b *x509.CertPool) bool { return a == b })); diff != "" {
		t.Errorf("DefaultConfig mismatch (-want +got):\n%s", diff)
	}
}
