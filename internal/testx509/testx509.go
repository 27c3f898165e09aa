// Package testx509 makes the certificates of tests about serving
// certificates: a CA per test and the leaves it signs, with the choices
// such tests turn on (the signature algorithm, a SAN extension or only a
// Common Name), and reads the webhook x509 counters of a registry.
package testx509

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// KeyType is the kind of key a CA and its leaves have.
type KeyType int

const (
	// ECDSA is a new P-256 key for each CA or self-signed certificate.
	ECDSA KeyType = iota
	// RSA is a 2048-bit key, needed to sign with SHA1WithRSA (whose
	// verification error quotes "SHA1-RSA"). All RSA certificates of a
	// test binary share one key, generated once: a key each would cost
	// seconds under -race.
	RSA
)

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
	rsaErr  error

	serial atomic.Int64
)

// newKey is a key of type kt and the SHA-256 signature algorithm for it.
func newKey(t testing.TB, kt KeyType) (crypto.Signer, x509.SignatureAlgorithm) {
	t.Helper()
	if kt == RSA {
		rsaOnce.Do(func() { rsaKey, rsaErr = rsa.GenerateKey(rand.Reader, 2048) })
		if rsaErr != nil {
			t.Fatal(rsaErr)
		}
		return rsaKey, x509.SHA256WithRSA
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key, x509.ECDSAWithSHA256
}

// issue sets tmpl's serial number and validity (from an hour ago to an
// hour from now) and signs it as parent (nil: self-signed) with key,
// parent's key and the certificate's own.
func issue(t testing.TB, tmpl, parent *x509.Certificate, key crypto.Signer) *tls.Certificate {
	t.Helper()
	now := time.Now()
	tmpl.SerialNumber = big.NewInt(serial.Add(1))
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(time.Hour)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}
}

// CA is a self-signed certificate authority, SHA-256-signed and valid
// from an hour ago to an hour from now.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// PEM is Cert PEM-encoded, as a caBundle.
	PEM []byte
}

// NewCA makes a CA named commonName (verification errors about its
// leaves quote it) with a key of type kt.
func NewCA(t testing.TB, commonName string, kt KeyType) *CA {
	t.Helper()
	key, alg := newKey(t, kt)
	c := issue(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SignatureAlgorithm:    alg,
	}, nil, key)
	return &CA{Cert: c.Leaf, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Leaf.Raw})}
}

// Pool is a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Names is what a leaf's SAN extension holds. The zero value, CNOnly,
// leaves the extension out: the leaf is named only by its Common Name,
// which Go refuses to verify a host name against ("x509: certificate
// relies on legacy Common Name field, use SANs instead").
type Names struct {
	DNS []string
	IPs []net.IP
}

// CNOnly is a leaf without a SAN extension.
var CNOnly Names

// SAN is a SAN extension holding the DNS name dns and ips.
func SAN(dns string, ips ...net.IP) Names {
	return Names{DNS: []string{dns}, IPs: ips}
}

// serving is the template of a serving certificate.
func serving(commonName string, alg x509.SignatureAlgorithm, names Names, key crypto.Signer) *x509.Certificate {
	tmpl := &x509.Certificate{
		Subject:            pkix.Name{CommonName: commonName},
		KeyUsage:           x509.KeyUsageDigitalSignature,
		ExtKeyUsage:        []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		SignatureAlgorithm: alg,
		DNSNames:           names.DNS,
		IPAddresses:        names.IPs,
	}
	if _, ok := key.(*rsa.PrivateKey); ok {
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	return tmpl
}

// Leaf signs with alg (0: the SHA-256 one of the CA's key) a serving
// certificate whose Common Name is commonName and whose SAN extension
// holds names. Its key is the CA's. Go 1.26 still signs with SHA-1: it
// only refuses to verify such signatures in chains.
func (ca *CA) Leaf(t testing.TB, commonName string, alg x509.SignatureAlgorithm, names Names) *tls.Certificate {
	t.Helper()
	return issue(t, serving(commonName, alg, names, ca.Key), ca.Cert, ca.Key)
}

// SelfSigned is a serving certificate as Leaf's, signed by its own key
// of type kt rather than by a CA.
func SelfSigned(t testing.TB, commonName string, kt KeyType, alg x509.SignatureAlgorithm, names Names) *tls.Certificate {
	t.Helper()
	key, _ := newKey(t, kt)
	return issue(t, serving(commonName, alg, names, key), nil, key)
}

// CheckWebhookCounters fails t unless g's
// apiserver_webhooks_x509_missing_san_total is san and its
// apiserver_webhooks_x509_insecure_sha1_total is sha1.
func CheckWebhookCounters(t testing.TB, g prometheus.Gatherer, san, sha1 float64) {
	t.Helper()
	got := map[string]float64{}
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
	}
	if got["apiserver_webhooks_x509_missing_san_total"] != san || got["apiserver_webhooks_x509_insecure_sha1_total"] != sha1 {
		t.Errorf("counters %v, want missing SAN %v, SHA-1 %v", got, san, sha1)
	}
}
