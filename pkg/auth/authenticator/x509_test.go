package authenticator

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/user"

	"github.com/kapi-dev/kapi/pkg/auth/internal/certtest"
)

func parsePEM(t testing.TB, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func requestWith(certs ...*x509.Certificate) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "https://kapi.test/api", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: certs}
	return r
}

func TestX509(t *testing.T) {
	b := testBundle(t)
	other := testBundle(t)
	admin := parsePEM(t, b.AdminCertPEM)

	root := certtest.Issue(t, caTemplate("test-root"), nil)
	inter := certtest.Issue(t, caTemplate("test-intermediate"), root)
	viaInter := certtest.Issue(t, clientTemplate("alice", "dev", "ops"), inter)
	expired := certtest.Issue(t, &x509.Certificate{
		Subject:     clientTemplate("old").Subject,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		NotBefore:   time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
	}, root)
	noCN := certtest.Issue(t, clientTemplate("", "dev"), root)
	withAuthGroup := certtest.Issue(t, clientTemplate("bob", user.AllAuthenticated), root)
	rootPool := x509.NewCertPool()
	rootPool.AddCert(root.Cert)

	noTLS := httptest.NewRequest(http.MethodGet, "/", nil)

	tests := []struct {
		name       string
		pool       *x509.CertPool
		req        *http.Request
		wantUser   string
		wantGroups []string
		wantErr    string // regexp
	}{
		{name: "no TLS", pool: b.CAPool, req: noTLS},
		{name: "no client certificate", pool: b.CAPool, req: requestWith()},
		{name: "no pool", pool: nil, req: requestWith(admin)},
		{
			name: "admin certificate", pool: b.CAPool, req: requestWith(admin),
			wantUser: pki.AdminUser, wantGroups: []string{pki.AdminGroup, user.AllAuthenticated},
		},
		{
			name: "certificate of another CA", pool: b.CAPool, req: requestWith(parsePEM(t, other.AdminCertPEM)),
			wantErr: `^verifying certificate SN=\d+, SKID=[0-9A-F]{2}(:[0-9A-F]{2})+, AKID=[0-9A-F]{2}(:[0-9A-F]{2})+ failed: x509: certificate signed by unknown authority`,
		},
		{
			name: "serving certificate (serverAuth only)", pool: b.CAPool, req: requestWith(b.Serving.Leaf),
			wantErr: `^verifying certificate SN=\d+, .* failed: x509: certificate specifies an incompatible key usage`,
		},
		{
			name: "expired", pool: rootPool, req: requestWith(expired.Cert),
			wantErr: `failed: x509: certificate has expired or is not yet valid`,
		},
		{
			name: "intermediate sent", pool: rootPool, req: requestWith(viaInter.Cert, inter.Cert),
			wantUser: "alice", wantGroups: []string{"dev", "ops", user.AllAuthenticated},
		},
		{
			name: "intermediate missing", pool: rootPool, req: requestWith(viaInter.Cert),
			wantErr: `failed: x509: certificate signed by unknown authority`,
		},
		{
			name: "intermediate under kapi's CA", pool: b.CAPool, req: requestWith(viaInter.Cert, inter.Cert, root.Cert),
			wantErr: `failed: x509: certificate signed by unknown authority`,
		},
		{name: "no common name", pool: rootPool, req: requestWith(noCN.Cert)},
		{
			name: "group already present", pool: rootPool, req: requestWith(withAuthGroup.Cert),
			wantUser: "bob", wantGroups: []string{user.AllAuthenticated},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, ok, err := NewX509(tc.pool).AuthenticateRequest(tc.req)
			if tc.wantErr != "" {
				if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) {
					t.Fatalf("got error %v, want one matching %s", err, tc.wantErr)
				}
				if ok || info != nil {
					t.Errorf("got ok=%v info=%+v with an error", ok, info)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			if tc.wantUser == "" {
				if ok || info != nil {
					t.Errorf("got ok=%v info=%+v, want no opinion", ok, info)
				}
				return
			}
			if !ok || info == nil {
				t.Fatalf("got ok=%v info=%+v, want user %q", ok, info, tc.wantUser)
			}
			if info.Name != tc.wantUser || !slices.Equal(info.Groups, tc.wantGroups) {
				t.Errorf("got user %q groups %v, want %q %v", info.Name, info.Groups, tc.wantUser, tc.wantGroups)
			}
		})
	}
}

// TestX509DoesNotAlias checks that changing a returned user leaves the
// certificate alone.
func TestX509DoesNotAlias(t *testing.T) {
	b := testBundle(t)
	admin := parsePEM(t, b.AdminCertPEM)
	a := NewX509(b.CAPool)
	info, _, err := a.AuthenticateRequest(requestWith(admin))
	if err != nil {
		t.Fatal(err)
	}
	info.Groups[0] = "changed"
	if got := admin.Subject.Organization; !slices.Equal(got, []string{pki.AdminGroup}) {
		t.Errorf("certificate organizations changed to %v", got)
	}
}

func TestColonHex(t *testing.T) {
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, ""},
		{[]byte{0x0a}, "0A"},
		{[]byte{0xde, 0xad, 0x01}, "DE:AD:01"},
	}
	for _, tc := range tests {
		if got := colonHex(tc.in); got != tc.want {
			t.Errorf("colonHex(%x) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzX509 feeds arbitrary DER as peer certificates: the authenticator must
// never panic, and may only succeed for a certificate that verifies.
func FuzzX509(f *testing.F) {
	b := testBundle(f)
	admin := parsePEM(f, b.AdminCertPEM)
	f.Add(admin.Raw, []byte(nil))
	f.Add(admin.Raw, b.CA.Raw)
	f.Add(b.Serving.Leaf.Raw, b.CA.Raw)
	f.Add(b.CA.Raw, []byte{})
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01}, []byte{0x30})
	f.Add([]byte("not der at all"), []byte{})
	a := NewX509(b.CAPool)

	f.Fuzz(func(t *testing.T, leafDER, interDER []byte) {
		leaf, err := x509.ParseCertificate(leafDER)
		if err != nil {
			return
		}
		peers := []*x509.Certificate{leaf}
		if inter, err := x509.ParseCertificate(interDER); err == nil {
			peers = append(peers, inter)
		}
		info, ok, err := a.AuthenticateRequest(requestWith(peers...))
		switch {
		case err != nil:
			if ok || info != nil {
				t.Fatalf("got ok=%v info=%+v with error %v", ok, info, err)
			}
			if !strings.HasPrefix(err.Error(), "verifying certificate SN=") {
				t.Fatalf("error %q lacks the certificate identifier", err)
			}
		case ok:
			if _, verr := leaf.Verify(x509.VerifyOptions{Roots: b.CAPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); verr != nil {
				t.Fatalf("authenticated %q with a certificate that does not verify: %v", info.Name, verr)
			}
			if info.Name != leaf.Subject.CommonName || !info.InGroup(user.AllAuthenticated) {
				t.Fatalf("got user %+v for subject %v", info, leaf.Subject)
			}
		}
	})
}
