package app

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
)

// The etcd PKI of a clustered embedded etcd, in the cert dir beside the
// cluster PKI. Peers and remote clients of the embedded etcd are verified
// with a CA of their own, not with the cluster CA: the cluster CA also
// signs the certificates of Kubernetes users (the admin kubeconfig, the
// CSR signer), none of which may reach etcd.
const (
	etcdCACertFile     = "etcd-ca.crt"
	etcdCAKeyFile      = "etcd-ca.key"
	etcdMemberCertFile = "etcd-member.crt"
	etcdMemberKeyFile  = "etcd-member.key"
)

// sharedPKIFiles are the files of the cert dir a joining server receives,
// so that every server of the cluster signs and verifies the same
// certificates and tokens. A file missing on the first server (sa.key when
// --service-account-signing-key-file is used) is not sent.
var sharedPKIFiles = []string{
	pki.CACertFile, pki.CAKeyFile,
	pki.FrontProxyCACertFile, pki.FrontProxyCAKeyFile,
	serviceaccount.GeneratedKeyFile, serviceaccount.GeneratedPublicKeyFile,
	etcdCACertFile, etcdCAKeyFile,
}

// isPrivateFile says whether a shared file is a key (mode 0600).
func isPrivateFile(name string) bool { return filepath.Ext(name) == ".key" }

// readSharedPKI reads the shared files of certDir.
func readSharedPKI(certDir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range sharedPKIFiles {
		b, err := os.ReadFile(filepath.Join(certDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

// writeSharedPKI writes the files a joining server received into certDir.
// A file that exists with other content is an error: the cert dir belongs
// to another cluster (or a server of its own), and overwriting its CA
// would invalidate every certificate it issued.
func writeSharedPKI(certDir string, files map[string][]byte) error {
	allowed := map[string]bool{}
	for _, n := range sharedPKIFiles {
		allowed[n] = true
	}
	for _, name := range []string{pki.CACertFile, pki.CAKeyFile, etcdCACertFile, etcdCAKeyFile} {
		if len(files[name]) == 0 {
			return fmt.Errorf("the join response lacks %s", name)
		}
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("create cert dir: %w", err)
	}
	for name, content := range files {
		if !allowed[name] {
			return fmt.Errorf("the join response holds an unexpected file %q", name)
		}
		path := filepath.Join(certDir, name)
		old, err := os.ReadFile(path)
		if err == nil {
			if bytes.Equal(old, content) {
				continue
			}
			return fmt.Errorf("%s already exists with other content: this cert dir belongs to another cluster or server; use a new --data-dir (or --cert-dir) to join", path)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		mode := fs.FileMode(0o644)
		if isPrivateFile(name) {
			mode = 0o600
		}
		if err := writeFileAtomic(path, content, mode); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file renamed
// into place, so a crash never leaves a partial file.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ensureEtcdCA loads the etcd CA of certDir, generating it when missing
// and create is set (the first server of a cluster).
func ensureEtcdCA(certDir string, create bool) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := filepath.Join(certDir, etcdCACertFile), filepath.Join(certDir, etcdCAKeyFile)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	if cerr == nil && kerr == nil {
		return parseCAPair(certPEM, keyPEM, certPath)
	}
	if !errors.Is(cerr, fs.ErrNotExist) || !errors.Is(kerr, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("etcd CA %s and %s: one is missing or unreadable (%v; %v)", certPath, keyPath, cerr, kerr)
	}
	if !create {
		return nil, nil, fmt.Errorf("the etcd CA %s of this cluster member is missing (it is created by --cluster-init and received with --join)", certPath)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("kapi-etcd-ca@%d", now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create etcd CA: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, nil, err
	}
	// The key first: a crash between the two leaves no CA certificate
	// without its key.
	if err := writeFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, nil, err
	}
	if err := writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func parseCAPair(certPEM, keyPEM []byte, certPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("etcd CA %s: not PEM", certPath)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd CA %s: %w", certPath, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd CA key of %s: %w", certPath, err)
	}
	if !cert.IsCA || !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("etcd CA %s: not a CA certificate, or its key does not match", certPath)
	}
	return cert, key, nil
}

// writeMemberCert issues this member's certificate (TLS server and client:
// peers dial each other) for the hosts of its peer and client addresses
// and loopback, signed by the etcd CA. It is issued anew at every start,
// so it follows the addresses and never expires on a running cluster that
// restarts at least yearly.
func writeMemberCert(certDir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hostPorts ...string) (certPath, keyPath string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	serial, err := randomSerial()
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"kapi-etcd-members"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	for _, hp := range hostPorts {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			return "", "", err
		}
		if ip := net.ParseIP(host); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", "", fmt.Errorf("issue etcd member certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certPath, keyPath = filepath.Join(certDir, etcdMemberCertFile), filepath.Join(certDir, etcdMemberKeyFile)
	if err := writeFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", err
	}
	if err := writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}
