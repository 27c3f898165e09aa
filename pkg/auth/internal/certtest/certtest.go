// Package certtest issues certificates for the tests of the auth
// packages: CAs, intermediates and leaves with ECDSA P-256 keys, valid for
// an hour either side of now unless the template says otherwise.
package certtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"testing"
	"time"
)

// Issued is a certificate with its key.
type Issued struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Issue creates a certificate from tmpl signed by parent (nil:
// self-signed). tmpl's serial number and basic constraints are set; its
// validity defaults to now ± 1 h.
func Issue(t testing.TB, tmpl *x509.Certificate, parent *Issued) *Issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = sn.Add(sn, big.NewInt(1))
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(time.Hour)
	}
	tmpl.BasicConstraintsValid = true
	parentCert, parentKey := tmpl, crypto.Signer(key)
	if parent != nil {
		parentCert, parentKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Issued{Cert: cert, Key: key}
}

// TLS returns the pair as a TLS certificate sending chain after the leaf.
func (i *Issued) TLS(chain ...*Issued) *tls.Certificate {
	c := &tls.Certificate{Certificate: [][]byte{i.Cert.Raw}, PrivateKey: i.Key, Leaf: i.Cert}
	for _, ch := range chain {
		c.Certificate = append(c.Certificate, ch.Cert.Raw)
	}
	return c
}
