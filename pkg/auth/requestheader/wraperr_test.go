package requestheader

import (
	"crypto/tls"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/internal/certtest"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// TestVerifyErrorsKept: one authenticator refuses, in turn, the cluster
// CA's admin certificate (twice), a certificate of another CA, and the
// admin one again: each error reads as a fresh authenticator's for the
// same certificate (the wrapping kept for the last error is reused only
// for that same error).
func TestVerifyErrorsKept(t *testing.T) {
	f := newFixture(t)
	cfg := DefaultConfig(f.bundle.FrontProxyCAPool)
	auth := mustNew(t, cfg)
	other := certtest.Issue(t, clientTemplate(pki.FrontProxyClientName), f.otherRoot).TLS()
	fresh := map[*tls.Certificate]string{}
	for _, c := range []*tls.Certificate{f.admin, other} {
		r := f.do(t, mustNew(t, cfg), c, hdr("X-Remote-User", "alice"))
		if r.err == nil {
			t.Fatal("certificate accepted as the proxy's")
		}
		fresh[c] = r.err.Error()
	}
	if fresh[f.admin] == fresh[other] {
		t.Fatalf("the two failures read the same: %s", fresh[other])
	}
	for i, c := range []*tls.Certificate{f.admin, f.admin, other, f.admin} {
		r := f.do(t, auth, c, hdr("X-Remote-User", "alice"))
		if r.ok || r.err == nil || r.err.Error() != fresh[c] {
			t.Errorf("request %d: got ok=%v err %v, want %s", i, r.ok, r.err, fresh[c])
		}
	}
}
