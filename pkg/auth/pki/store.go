package pki

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// keyPair is a certificate with its private key. certPEM holds only the
// certificate itself, never a chain.
type keyPair struct {
	cert    *x509.Certificate
	certPEM []byte
	key     crypto.Signer
	keyPEM  []byte
}

// store reads and writes the pairs of one Ensure call.
type store struct {
	dir        string
	log        *slog.Logger
	bundle     *Bundle
	noSync     bool                     // see Config.NoSync
	deferWrite func(write func() error) // see Config.Defer
}

// do runs write now, or hands it to Config.Defer.
func (s *store) do(write func() error) error {
	if s.deferWrite != nil {
		s.deferWrite(write)
		return nil
	}
	return write()
}

func (s *store) path(name string) string { return filepath.Join(s.dir, name) }

// caSpec describes a self-signed certificate authority.
type caSpec struct {
	certFile, keyFile string
	// cnPrefix is followed by "@<unix seconds>" in the subject.
	cnPrefix string
}

var (
	clusterCA    = caSpec{certFile: CACertFile, keyFile: CAKeyFile, cnPrefix: "kapi-ca"}
	frontProxyCA = caSpec{certFile: FrontProxyCACertFile, keyFile: FrontProxyCAKeyFile, cnPrefix: "kapi-front-proxy-ca"}
)

func (s *store) ensureCA(spec caSpec, now time.Time) (*keyPair, error) {
	ca, err := s.load(spec.certFile, spec.keyFile)
	if err != nil {
		return nil, err
	}
	if ca != nil {
		if !ca.cert.IsCA {
			return nil, fmt.Errorf("%s is not a CA certificate (basic constraints CA:FALSE)", s.path(spec.certFile))
		}
		if ca.cert.NotAfter.Sub(now) >= RenewBefore && !now.Before(ca.cert.NotBefore) {
			return ca, nil
		}
		s.log.Warn("replacing certificate authority; clients trusting the old one must be updated",
			"file", s.path(spec.certFile), "notBefore", ca.cert.NotBefore, "notAfter", ca.cert.NotAfter)
	}
	ca, err = newCA(spec.cnPrefix, now)
	if err != nil {
		return nil, err
	}
	if err := s.write(spec.certFile, spec.keyFile, ca.certPEM, ca.keyPEM, "no usable CA"); err != nil {
		return nil, err
	}
	return ca, nil
}

func (s *store) ensureLeaf(ca *keyPair, spec leafSpec, now time.Time) (*keyPair, error) {
	kp, err := s.load(spec.certFile, spec.keyFile)
	if err != nil {
		return nil, err
	}
	reason := "missing"
	if kp != nil {
		if reason = leafProblem(kp.cert, ca.cert, spec, now); reason == "" {
			return kp, nil
		}
	}
	kp, err = newLeaf(ca, spec, now)
	if err != nil {
		return nil, err
	}
	certFile := kp.certPEM
	if spec.usage == x509.ExtKeyUsageServerAuth {
		// Serve the chain, as upstream's self-signed pair does.
		certFile = append(append([]byte{}, kp.certPEM...), ca.certPEM...)
	}
	if err := s.write(spec.certFile, spec.keyFile, certFile, kp.keyPEM, reason); err != nil {
		return nil, err
	}
	return kp, nil
}

// leafProblem says why a stored leaf cannot be reused, or "" if it can.
func leafProblem(cert, ca *x509.Certificate, spec leafSpec, now time.Time) string {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := cert.Verify(x509.VerifyOptions{
		Roots:       roots,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{spec.usage},
	})
	if err != nil {
		return fmt.Sprintf("does not verify against %s: %v", spec.caFile, err)
	}
	if cert.NotAfter.Sub(now) < RenewBefore {
		return fmt.Sprintf("expires at %s, in less than %s", cert.NotAfter.UTC().Format(time.RFC3339), RenewBefore)
	}
	if cert.Subject.CommonName != spec.cn {
		return fmt.Sprintf("common name is %q, want %q", cert.Subject.CommonName, spec.cn)
	}
	for _, h := range spec.hosts {
		if cert.VerifyHostname(h) != nil {
			return fmt.Sprintf("does not cover host %q", h)
		}
	}
	return ""
}

// load reads a pair from the directory. Both files missing is (nil, nil).
func (s *store) load(certName, keyName string) (*keyPair, error) {
	if s.dir == "" {
		return nil, nil
	}
	certPath, keyPath := s.path(certName), s.path(keyName)
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	certMissing, keyMissing := errors.Is(certErr, fs.ErrNotExist), errors.Is(keyErr, fs.ErrNotExist)
	switch {
	case certMissing && keyMissing:
		return nil, nil
	case certMissing:
		return nil, fmt.Errorf("key %s exists but certificate %s does not: %w", keyPath, certPath, ErrUnpaired)
	case keyMissing:
		return nil, fmt.Errorf("certificate %s exists but key %s does not: %w", certPath, keyPath, ErrUnpaired)
	case certErr != nil:
		return nil, fmt.Errorf("read certificate: %w", certErr)
	case keyErr != nil:
		return nil, fmt.Errorf("read key: %w", keyErr)
	}
	kp, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load %s and %s: %w", certPath, keyPath, err)
	}
	return kp, nil
}

// parsePair checks that keyPEM belongs to the first certificate of certPEM.
func parsePair(certPEM, keyPEM []byte) (*keyPair, error) {
	tc, err := tlsPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	signer, ok := tc.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", tc.PrivateKey)
	}
	return &keyPair{cert: tc.Leaf, certPEM: encodeCert(tc.Leaf.Raw), key: signer, keyPEM: keyPEM}, nil
}

// tlsPair is tls.X509KeyPair with Leaf always set.
func tlsPair(certPEM, keyPEM []byte) (tls.Certificate, error) {
	tc, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	if tc.Leaf == nil {
		leaf, err := x509.ParseCertificate(tc.Certificate[0])
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("parse certificate: %w", err)
		}
		tc.Leaf = leaf
	}
	return tc, nil
}

// write stores a pair, key first, each file atomically.
func (s *store) write(certName, keyName string, certPEM, keyPEM []byte, reason string) error {
	if s.dir == "" {
		return nil
	}
	keyPath, certPath, sync := s.path(keyName), s.path(certName), !s.noSync
	if err := s.do(func() error {
		if err := writeFileAtomic(keyPath, keyPEM, 0o600, sync); err != nil {
			return err
		}
		return writeFileAtomic(certPath, certPEM, 0o644, sync)
	}); err != nil {
		return err
	}
	s.bundle.Generated = append(s.bundle.Generated, keyName, certName)
	s.log.Info("generated certificate", "file", s.path(certName), "key", s.path(keyName), "reason", reason)
	return nil
}

// writeFileAtomic replaces path with data: readers see the old file or the
// new one, never a partial write. The mode is set explicitly, not via the
// umask. Unless sync is false, the data is on disk before the rename.
func writeFileAtomic(path string, data []byte, mode fs.FileMode, sync bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
