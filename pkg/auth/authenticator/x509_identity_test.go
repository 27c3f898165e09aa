package authenticator

import (
	"crypto/x509"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/internal/certtest"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// TestX509KeptIdentities authenticates several certificates (a user, one
// without a common name, and the same user's certificate parsed again, as
// a new connection has it) three times each through one authenticator:
// the later answers (from the kept identities) equal the first, and a
// caller changing a returned user changes no later answer.
func TestX509KeptIdentities(t *testing.T) {
	root := certtest.Issue(t, caTemplate("test-root"), nil)
	alice := certtest.Issue(t, clientTemplate("alice", "dev", "ops"), root)
	noCN := certtest.Issue(t, clientTemplate("", "dev"), root)
	aliceAgain, err := x509.ParseCertificate(alice.Cert.Raw)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(root.Cert)
	a := NewX509(pool)
	for _, c := range []*x509.Certificate{alice.Cert, noCN.Cert, aliceAgain} {
		first, ok, err := a.AuthenticateRequest(requestWith(c))
		if err != nil {
			t.Fatal(err)
		}
		if (c.Subject.CommonName != "") != ok {
			t.Fatalf("%q: ok=%v", c.Subject.CommonName, ok)
		}
		var want *user.Info
		if first != nil {
			want = &user.Info{Name: first.Name, UID: first.UID, Groups: append([]string(nil), first.Groups...),
				Extra: map[string][]string{CredentialIDKey: append([]string(nil), first.Extra[CredentialIDKey]...)}}
			first.Groups[0] = "changed"
			first.Extra[CredentialIDKey][0] = "changed"
			first.Extra["x"] = []string{"y"}
		}
		for range 2 {
			got, _, err := a.AuthenticateRequest(requestWith(c))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q: got %+v, want %+v", c.Subject.CommonName, got, want)
			}
		}
	}
}
