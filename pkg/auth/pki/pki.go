package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// File names inside the certificate directory.
const (
	CACertFile      = "ca.crt"
	CAKeyFile       = "ca.key"
	ServingCertFile = "apiserver.crt"
	ServingKeyFile  = "apiserver.key"
	AdminCertFile   = "admin.crt"
	AdminKeyFile    = "admin.key"
)

// Identity of the generated admin client certificate, as kubeadm names it.
const (
	AdminUser  = "kubernetes-admin"
	AdminGroup = "system:masters"
)

// servingCommonName is the subject of the generated serving certificate;
// clients check its SANs, never this name.
const servingCommonName = "kapi-apiserver"

// RenewBefore is how long before expiry a generated leaf is replaced.
const RenewBefore = 30 * 24 * time.Hour

// Validity periods of generated certificates.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
	// backdate covers small clock differences between server and clients.
	backdate = time.Hour
)

// ErrUnpaired is returned when a certificate exists without its key or a
// key without its certificate.
var ErrUnpaired = errors.New("certificate and key must be supplied as a pair")

// Config says where the generated PKI lives and what it must cover.
type Config struct {
	// Dir is the certificate directory (--cert-dir). Empty keeps
	// everything in memory: generated on every call, never written.
	Dir string
	// Hosts are extra names and IPs the serving certificate must cover,
	// such as the bind address. Unspecified IPs (0.0.0.0, ::) and empty
	// strings are ignored.
	Hosts []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per generated file; nil means slog.Default().
	Logger *slog.Logger
}

// Files are the paths of the six PKI files. They are empty when the
// bundle lives in memory only.
type Files struct {
	CACert, CAKey           string
	ServingCert, ServingKey string
	AdminCert, AdminKey     string
}

// Bundle is the PKI a server runs with.
type Bundle struct {
	// CA is the certificate authority that signed Serving and the admin
	// certificate; CAPool holds just CA, CAPEM is its PEM encoding.
	CA     *x509.Certificate
	CAPool *x509.CertPool
	CAPEM  []byte
	// Serving is the serving key pair; its chain is the leaf then CA, and
	// Leaf is set.
	Serving tls.Certificate
	// AdminCertPEM and AdminKeyPEM are the admin client credentials, as
	// written into the admin kubeconfig.
	AdminCertPEM []byte
	AdminKeyPEM  []byte
	// Files are where the bundle was read from or written to.
	Files Files
	// Generated lists the base names of the files this call wrote, in
	// the order written. Empty when everything was reused.
	Generated []string
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func filesIn(dir string) Files {
	if dir == "" {
		return Files{}
	}
	j := func(name string) string { return filepath.Join(dir, name) }
	return Files{
		CACert: j(CACertFile), CAKey: j(CAKeyFile),
		ServingCert: j(ServingCertFile), ServingKey: j(ServingKeyFile),
		AdminCert: j(AdminCertFile), AdminKey: j(AdminKeyFile),
	}
}

// Ensure returns the PKI in cfg.Dir, generating what is missing.
//
// For each pair (CA, serving, admin): both files present means reuse; only
// one present is an error wrapping [ErrUnpaired]; neither present means
// generate. A reused CA that expires within [RenewBefore] is replaced. A
// reused leaf is replaced when it no longer verifies against the CA (for
// its purpose), expires within [RenewBefore], or (serving only) does not
// cover every required host. Files are written atomically: directories
// 0755, certificates 0644, keys 0600.
func Ensure(cfg Config) (*Bundle, error) {
	now := cfg.now()
	log := cfg.logger()
	hosts := servingHosts(cfg.Hosts, log)
	b := &Bundle{Files: filesIn(cfg.Dir)}
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("create certificate directory: %w", err)
		}
	}
	s := &store{dir: cfg.Dir, log: log, bundle: b}

	ca, err := s.ensureCA(now)
	if err != nil {
		return nil, err
	}
	serving, err := s.ensureLeaf(ca, leafSpec{
		certFile: ServingCertFile, keyFile: ServingKeyFile,
		usage: x509.ExtKeyUsageServerAuth,
		cn:    servingCommonName, hosts: hosts,
	}, now)
	if err != nil {
		return nil, err
	}
	admin, err := s.ensureLeaf(ca, leafSpec{
		certFile: AdminCertFile, keyFile: AdminKeyFile,
		usage: x509.ExtKeyUsageClientAuth,
		cn:    AdminUser, orgs: []string{AdminGroup},
	}, now)
	if err != nil {
		return nil, err
	}

	b.CA = ca.cert
	b.CAPool = x509.NewCertPool()
	b.CAPool.AddCert(ca.cert)
	b.CAPEM = ca.certPEM
	b.Serving = tls.Certificate{
		Certificate: [][]byte{serving.cert.Raw, ca.cert.Raw},
		PrivateKey:  serving.key,
		Leaf:        serving.cert,
	}
	b.AdminCertPEM = admin.certPEM
	b.AdminKeyPEM = admin.keyPEM
	return b, nil
}
