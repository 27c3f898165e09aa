package authenticator

import (
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"regexp"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/internal/certtest"
)

// The user of a client certificate, as upstream's CommonNameUserConversion
// (k8s.io/apiserver v0.37.2 pkg/authentication/request/x509/x509.go): UID
// from the subject's UID attribute (OID 1.3.6.1.4.1.57683.2, apimachinery
// pkg/apis/asn1 X509UID), the credential ID of the leaf.
func TestX509UIDAndCredentialID(t *testing.T) {
	root := certtest.Issue(t, caTemplate("root"), nil)
	pool := x509.NewCertPool()
	pool.AddCert(root.Cert)
	withUIDs := func(uids ...any) *x509.Certificate {
		tmpl := clientTemplate("carol", "devs")
		for _, u := range uids {
			tmpl.Subject.ExtraNames = append(tmpl.Subject.ExtraNames, pkix.AttributeTypeAndValue{Type: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 2}, Value: u})
		}
		return certtest.Issue(t, tmpl, root).Cert
	}
	for _, tc := range []struct {
		name    string
		cert    *x509.Certificate
		wantUID string
		wantErr string
	}{
		{name: "no UID", cert: withUIDs()},
		{name: "one UID", cert: withUIDs("uid-1"), wantUID: "uid-1"},
		{name: "two UIDs", cert: withUIDs("uid-1", "uid-2"), wantErr: `^expected 1 UID, but found multiple: \[uid-1 uid-2\]$`},
		{name: "empty UID", cert: withUIDs(""), wantErr: `^UID cannot be an empty string$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, ok, err := NewX509(pool).AuthenticateRequest(requestWith(tc.cert))
			if tc.wantErr != "" {
				if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) || ok {
					t.Fatalf("got %v %v, want an error matching %s", ok, err, tc.wantErr)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("got %v %v", ok, err)
			}
			fp := sha256.Sum256(tc.cert.Raw)
			want := "X509SHA256=" + hex.EncodeToString(fp[:])
			if info.Name != "carol" || info.UID != tc.wantUID || len(info.Extra[CredentialIDKey]) != 1 || info.Extra[CredentialIDKey][0] != want {
				t.Errorf("got %+v, want carol with UID %q and credential ID %s", info, tc.wantUID, want)
			}
		})
	}
}

// A verifier keeps the answer for a chain, but never past what a fresh
// verification would answer: a kept success ends when a certificate of
// the chain expires, a kept failure after failureTTL; other chains and
// other roots get their own answers.
func TestClientCertVerifierKeepsAnswers(t *testing.T) {
	now := time.Now()
	root := certtest.Issue(t, caTemplate("root"), nil)
	inter := certtest.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "inter"}, IsCA: true, KeyUsage: x509.KeyUsageCertSign,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * time.Minute)}, root)
	leaf := certtest.Issue(t, clientTemplate("dave"), inter) // valid for an hour: the intermediate ends first
	later := clientTemplate("erin")
	later.NotBefore, later.NotAfter = now.Add(5*time.Minute), now.Add(2*time.Hour)
	notYet := certtest.Issue(t, later, root)
	pool := x509.NewCertPool()
	pool.AddCert(root.Cert)
	v := NewClientCertVerifier(pool)

	chain := []*x509.Certificate{leaf.Cert, inter.Cert}
	for i := range 3 {
		if _, err := v.Verify(chain, now); err != nil {
			t.Fatalf("verify %d: %v", i, err)
		}
	}
	if len(v.answers) != 1 {
		t.Fatalf("%d answers kept after three verifications of one chain, want 1", len(v.answers))
	}
	if _, err := v.Verify(chain, now.Add(31*time.Minute)); err == nil {
		t.Fatal("a kept success outlived the intermediate's NotAfter")
	}
	if _, err := v.Verify([]*x509.Certificate{leaf.Cert}, now); err == nil {
		t.Fatal("the leaf without its intermediate verified (answered for the whole chain?)")
	}

	if _, err := v.Verify([]*x509.Certificate{notYet.Cert}, now); err == nil {
		t.Fatal("a certificate not yet valid verified")
	}
	if _, err := v.Verify([]*x509.Certificate{notYet.Cert}, now.Add(failureTTL/2)); err == nil {
		t.Fatal("the kept failure was not answered within failureTTL")
	}
	if _, err := v.Verify([]*x509.Certificate{notYet.Cert}, now.Add(6*time.Minute)); err != nil {
		t.Fatalf("a kept failure outlived failureTTL: %v", err)
	}

	other := NewClientCertVerifier(x509.NewCertPool())
	if _, err := other.Verify(chain, now); err == nil {
		t.Fatal("a chain verified under one verifier's roots was accepted by another's")
	}
}

func BenchmarkX509Authenticate(b *testing.B) {
	bundle := testBundle(b)
	req := requestWith(parsePEM(b, bundle.AdminCertPEM))
	b.Run("kept answers", func(b *testing.B) {
		a := NewX509(bundle.CAPool)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok, err := a.AuthenticateRequest(req); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("verify every time", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := VerifyClientCertificate(req.TLS.PeerCertificates, bundle.CAPool, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A chain's digest is kept by its certificates' addresses (a connection's
// requests share one parsed chain): the same chain again answers from the
// kept answer without a digest; the same bytes parsed again (another
// connection) share that answer; a different chain at other addresses is
// not mistaken for it; and the kept digests stay bounded.
func TestClientCertVerifierKeysChainsByAddress(t *testing.T) {
	now := time.Now()
	root := certtest.Issue(t, caTemplate("root"), nil)
	leaf := certtest.Issue(t, clientTemplate("dave"), root)
	pool := x509.NewCertPool()
	pool.AddCert(root.Cert)
	v := NewClientCertVerifier(pool)

	chain := []*x509.Certificate{leaf.Cert}
	if _, err := v.Verify(chain, now); err != nil {
		t.Fatal(err)
	}
	if len(v.keys) != 1 || len(v.answers) != 1 {
		t.Fatalf("after one chain: %d digests, %d answers kept, want 1 and 1", len(v.keys), len(v.answers))
	}
	// The kept digest is the chain's: a forged entry for the same
	// addresses would be used (so the address is what is looked up).
	key := v.keys[chainAddrs{n: 1, certs: [maxKeyedChain]*x509.Certificate{leaf.Cert}}]
	if key != chainKey(chain) {
		t.Fatal("the digest kept for the chain's addresses is not its chainKey")
	}

	reparsed, err := x509.ParseCertificate(leaf.Cert.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.Verify([]*x509.Certificate{reparsed}, now); err != nil || got != reparsed {
		t.Fatalf("the same chain parsed again: got %v, %v", got, err)
	}
	if len(v.keys) != 2 || len(v.answers) != 1 {
		t.Fatalf("after the same bytes at a second address: %d digests, %d answers kept, want 2 and 1", len(v.keys), len(v.answers))
	}

	stranger := certtest.Issue(t, clientTemplate("mallory"), certtest.Issue(t, caTemplate("other root"), nil))
	if _, err := v.Verify([]*x509.Certificate{stranger.Cert}, now); err == nil {
		t.Fatal("a chain from other roots verified")
	}
	if _, err := v.Verify([]*x509.Certificate{stranger.Cert}, now); err == nil {
		t.Fatal("a chain from other roots verified the second time")
	}
	if _, err := v.Verify(chain, now); err != nil {
		t.Fatalf("the first chain after another: %v", err)
	}

	for range maxKeyedChains + 10 {
		c, err := x509.ParseCertificate(leaf.Cert.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify([]*x509.Certificate{c}, now); err != nil {
			t.Fatal(err)
		}
	}
	if len(v.keys) > maxKeyedChains {
		t.Errorf("%d digests kept, want at most %d", len(v.keys), maxKeyedChains)
	}
}
