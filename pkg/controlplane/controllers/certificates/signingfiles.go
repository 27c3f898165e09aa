package certificates

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// CA is a signing CA: its certificate and private key.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// LoadCA reads a CA certificate and its private key from PEM files
// (--cluster-signing-cert-file and -key-file, or a per-signer pair): the
// first certificate of certFile must match the key, which must be an RSA,
// ECDSA or Ed25519 key. As upstream's signer, the files are read once, at
// start (kube-controller-manager also reloads them when they change; kapi
// does not).
func LoadCA(certFile, keyFile string) (CA, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return CA{}, fmt.Errorf("error reading CSR signer CA files %q and %q: %w", certFile, keyFile, err)
	}
	cert := pair.Leaf
	if cert == nil {
		if cert, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return CA{}, fmt.Errorf("error parsing CSR signer CA certificate %q: %w", certFile, err)
		}
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return CA{}, fmt.Errorf("error reading CSR signer CA key %q: %T cannot sign", keyFile, pair.PrivateKey)
	}
	return CA{Cert: cert, Key: key}, nil
}
