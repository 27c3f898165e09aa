package authenticator

import (
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// NewX509 authenticates requests by their TLS client certificate, verified
// against pool for client authentication. Further certificates the client
// sent are used as intermediates. The user is the subject's common name,
// the groups its organizations plus system:authenticated. A request without
// a client certificate gets no opinion; a certificate that does not verify
// is an error. A nil pool gives no opinion on every request.
func NewX509(pool *x509.CertPool) Request {
	return &x509Authenticator{roots: pool, now: time.Now}
}

type x509Authenticator struct {
	roots *x509.CertPool
	now   func() time.Time
}

var _ Request = (*x509Authenticator)(nil)

func (a *x509Authenticator) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	if a.roots == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf, err := VerifyClientCertificate(r.TLS.PeerCertificates, a.roots, a.now())
	if err != nil {
		return nil, false, err
	}
	// A verified certificate without a common name names nobody; leave it to
	// the next authenticator, as upstream does.
	if leaf.Subject.CommonName == "" {
		return nil, false, nil
	}
	return authenticated(&user.Info{
		Name:   leaf.Subject.CommonName,
		Groups: slices.Clone(leaf.Subject.Organization),
	}), true, nil
}

// VerifyClientCertificate verifies a TLS peer's chain (leaf first, then
// the intermediates it sent) against roots at now, for client
// authentication, and returns the leaf. The error names the certificate
// as upstream does: "verifying certificate SN=..., SKID=..., AKID=...
// failed: <reason>".
func VerifyClientCertificate(peers []*x509.Certificate, roots *x509.CertPool, now time.Time) (*x509.Certificate, error) {
	if len(peers) == 0 || peers[0] == nil {
		return nil, errors.New("verifying certificate failed: nil certificate")
	}
	leaf := peers[0]
	opts := x509.VerifyOptions{
		Roots:       roots,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(peers) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range peers[1:] {
			if c != nil {
				opts.Intermediates.AddCert(c)
			}
		}
	}
	if _, err := leaf.Verify(opts); err != nil {
		return nil, fmt.Errorf("verifying certificate %s failed: %w", certificateID(leaf), err)
	}
	return leaf, nil
}

// certificateID names a certificate in errors the way upstream does:
// "SN=<decimal>, SKID=AB:CD:..., AKID=...".
func certificateID(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%d, SKID=%s, AKID=%s", c.SerialNumber, colonHex(c.SubjectKeyId), colonHex(c.AuthorityKeyId))
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i := range b {
		parts[i] = strings.ToUpper(hex.EncodeToString(b[i : i+1]))
	}
	return strings.Join(parts, ":")
}
