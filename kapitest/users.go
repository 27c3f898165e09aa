package kapitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// User is an identity to make a client for: the user name and groups of
// a client certificate (common name and organizations), as envtest's
// User.
type User struct {
	Name   string
	Groups []string
}

// AddUser returns a client config that authenticates as u: a client
// certificate for u, signed by the server's CA (which its client-
// certificate authenticator trusts), valid for a day. What u may do is up
// to the server's authorizer; the admin Config is in system:masters.
func (s *Server) AddUser(u User) (*rest.Config, error) {
	if u.Name == "" {
		return nil, errors.New("kapitest: AddUser needs a user name")
	}
	certPEM, err := os.ReadFile(filepath.Join(s.certDir, pki.CACertFile))
	if err != nil {
		return nil, fmt.Errorf("read the server's CA: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(s.certDir, pki.CAKeyFile))
	if err != nil {
		return nil, fmt.Errorf("read the server's CA key: %w", err)
	}
	ca, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load the server's CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse the server's CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: u.Name, Organization: u.Groups},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("sign a certificate for %q: %w", u.Name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
	cfg.TLSClientConfig.CertData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cfg.TLSClientConfig.KeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cfg.BearerToken, cfg.BearerTokenFile, cfg.Username, cfg.Password = "", "", "", ""
	return cfg, nil
}
