package pki

import (
	"crypto"
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

	// The front-proxy CA and the client certificate it signs, which the
	// aggregator presents to extension API servers (kubeadm's names).
	FrontProxyCACertFile     = "front-proxy-ca.crt"
	FrontProxyCAKeyFile      = "front-proxy-ca.key"
	FrontProxyClientCertFile = "front-proxy-client.crt"
	FrontProxyClientKeyFile  = "front-proxy-client.key"
)

// Identity of the generated admin client certificate, as kubeadm names it.
const (
	AdminUser  = "kubernetes-admin"
	AdminGroup = "system:masters"
)

// FrontProxyClientName is the common name of the generated proxy client
// certificate, as kubeadm names it; backends list it in
// --requestheader-allowed-names.
const FrontProxyClientName = "front-proxy-client"

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
	// NoSync writes the files without fsync: for a directory that is
	// thrown away after the run (kapitest's), where a machine crash need
	// not be survived and a dozen fsyncs on a busy disk cost more than
	// the rest of the PKI.
	NoSync bool
	// Defer, if not nil, is handed the writes of the generated files (and
	// the creation of Dir) in the order Ensure would make them, instead of
	// Ensure making them: Ensure returns once the bundle is in memory,
	// and the caller must run each write, in order, and stop at the first
	// error, before anything reads the files. nil: written before Ensure
	// returns.
	Defer func(write func() error)
}

// Files are the paths of the ten PKI files. They are empty when the
// bundle lives in memory only.
type Files struct {
	CACert, CAKey           string
	ServingCert, ServingKey string
	AdminCert, AdminKey     string
	// FrontProxyCACert and FrontProxyCAKey are the front-proxy CA;
	// ProxyClientCert and ProxyClientKey the client pair it signed.
	FrontProxyCACert, FrontProxyCAKey string
	ProxyClientCert, ProxyClientKey   string
}

// Bundle is the PKI a server runs with.
type Bundle struct {
	// CA is the certificate authority that signed Serving and the admin
	// certificate; CAPool holds just CA, CAPEM is its PEM encoding.
	CA     *x509.Certificate
	CAPool *x509.CertPool
	CAPEM  []byte
	// CAKey is CA's private key: the CSR signing controller signs
	// approved client certificate requests with it (as
	// kube-controller-manager's --cluster-signing-cert-file/-key-file,
	// which kubeadm points at the cluster CA).
	CAKey crypto.Signer
	// Serving is the serving key pair; its chain is the leaf then CA, and
	// Leaf is set.
	Serving tls.Certificate
	// AdminCertPEM and AdminKeyPEM are the admin client credentials, as
	// written into the admin kubeconfig.
	AdminCertPEM []byte
	AdminKeyPEM  []byte
	// FrontProxyCA is a second, separate certificate authority: it signs
	// only ProxyClient, and only request-header authentication trusts it
	// (never the client-certificate authenticator, which trusts CA).
	// FrontProxyCAPool holds just FrontProxyCA, FrontProxyCAPEM is its PEM
	// encoding (--requestheader-client-ca-file).
	FrontProxyCA     *x509.Certificate
	FrontProxyCAPool *x509.CertPool
	FrontProxyCAPEM  []byte
	// ProxyClient is the client key pair (CN [FrontProxyClientName],
	// client auth only) the aggregator presents to extension API servers
	// (--proxy-client-cert-file, --proxy-client-key-file). Its chain is
	// the leaf alone, and Leaf is set.
	ProxyClient tls.Certificate
	// Files are where the bundle was read from or written to.
	Files Files
	// Generated lists the base names of the files this call wrote (with
	// Config.Defer: handed over to be written), in the order written.
	// Empty when everything was reused.
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
		FrontProxyCACert: j(FrontProxyCACertFile), FrontProxyCAKey: j(FrontProxyCAKeyFile),
		ProxyClientCert: j(FrontProxyClientCertFile), ProxyClientKey: j(FrontProxyClientKeyFile),
	}
}

// Ensure returns the PKI in cfg.Dir, generating what is missing.
//
// For each pair (CA, serving, admin, front-proxy CA, front-proxy client):
// both files present means reuse; only one present is an error wrapping
// [ErrUnpaired]; neither present means generate. A reused CA that expires
// within [RenewBefore] is replaced. A reused leaf is replaced when it no
// longer verifies against the CA that signs it (for its purpose), expires
// within [RenewBefore], has another common name, or (serving only) does not
// cover every required host. Files are written atomically: directories
// 0755, certificates 0644, keys 0600.
func Ensure(cfg Config) (*Bundle, error) {
	now := cfg.now()
	log := cfg.logger()
	hosts := servingHosts(cfg.Hosts, log)
	b := &Bundle{Files: filesIn(cfg.Dir)}
	s := &store{dir: cfg.Dir, log: log, bundle: b, noSync: cfg.NoSync, deferWrite: cfg.Defer}
	if cfg.Dir != "" {
		if err := s.do(func() error {
			if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
				return fmt.Errorf("create certificate directory: %w", err)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}

	ca, err := s.ensureCA(clusterCA, now)
	if err != nil {
		return nil, err
	}
	serving, err := s.ensureLeaf(ca, leafSpec{
		certFile: ServingCertFile, keyFile: ServingKeyFile, caFile: CACertFile,
		usage: x509.ExtKeyUsageServerAuth,
		cn:    servingCommonName, hosts: hosts,
	}, now)
	if err != nil {
		return nil, err
	}
	admin, err := s.ensureLeaf(ca, leafSpec{
		certFile: AdminCertFile, keyFile: AdminKeyFile, caFile: CACertFile,
		usage: x509.ExtKeyUsageClientAuth,
		cn:    AdminUser, orgs: []string{AdminGroup},
	}, now)
	if err != nil {
		return nil, err
	}
	fpCA, err := s.ensureCA(frontProxyCA, now)
	if err != nil {
		return nil, err
	}
	proxyClient, err := s.ensureLeaf(fpCA, leafSpec{
		certFile: FrontProxyClientCertFile, keyFile: FrontProxyClientKeyFile, caFile: FrontProxyCACertFile,
		usage: x509.ExtKeyUsageClientAuth,
		cn:    FrontProxyClientName,
	}, now)
	if err != nil {
		return nil, err
	}

	b.CA = ca.cert
	b.CAKey = ca.key
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
	b.FrontProxyCA = fpCA.cert
	b.FrontProxyCAPool = x509.NewCertPool()
	b.FrontProxyCAPool.AddCert(fpCA.cert)
	b.FrontProxyCAPEM = fpCA.certPEM
	b.ProxyClient = tls.Certificate{
		Certificate: [][]byte{proxyClient.cert.Raw},
		PrivateKey:  proxyClient.key,
		Leaf:        proxyClient.cert,
	}
	return b, nil
}
