package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// LoadServing reads a serving key pair the operator supplied
// (--tls-cert-file, --tls-private-key-file). The certificate file may hold
// a chain, leaf first. The returned certificate has Leaf set.
func LoadServing(certFile, keyFile string) (tls.Certificate, error) {
	return loadPair("serving", certFile, keyFile)
}

// LoadProxyClient reads the client key pair the aggregator presents to
// extension API servers (--proxy-client-cert-file,
// --proxy-client-key-file). The certificate file may hold a chain, leaf
// first. The returned certificate has Leaf set. As upstream, its key usage
// and name are not checked here: the backend decides whom it trusts.
func LoadProxyClient(certFile, keyFile string) (tls.Certificate, error) {
	return loadPair("proxy client", certFile, keyFile)
}

// loadPair reads a key pair; kind names it in errors.
func loadPair(kind, certFile, keyFile string) (tls.Certificate, error) {
	if certFile == "" || keyFile == "" {
		return tls.Certificate{}, fmt.Errorf("%s certificate %q and key %q: %w", kind, certFile, keyFile, ErrUnpaired)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read %s certificate: %w", kind, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read %s key: %w", kind, err)
	}
	tc, err := tlsPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load %s certificate %s and key %s: %w", kind, certFile, keyFile, err)
	}
	return tc, nil
}

// LoadCAPool reads a PEM bundle of CA certificates (--client-ca-file,
// --requestheader-client-ca-file).
// Every CERTIFICATE block must parse and there must be at least one.
func LoadCAPool(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate %d of CA bundle %s: %w", n+1, file, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("CA bundle %s holds no PEM CERTIFICATE block", file)
	}
	return pool, nil
}

// ServingTrust returns the PEM of the certificate authorities a client
// should verify serving with, and where they came from, for a serving key
// pair the operator supplied (--tls-cert-file):
//
//   - the certificates chained after the leaf in the file, when there are
//     any (the flag's help: "If HTTPS serving is enabled ... the CA cert,
//     if any, concatenated after server cert");
//   - else ours, when ours signed the leaf;
//   - else the leaf itself, when it is self-signed;
//   - else nil: the issuer is unknown, clients fall back to system roots.
func ServingTrust(serving tls.Certificate, ours *x509.Certificate) ([]byte, string) {
	if len(serving.Certificate) > 1 {
		var out []byte
		for _, der := range serving.Certificate[1:] {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
		}
		return out, "chain in --tls-cert-file"
	}
	leaf := serving.Leaf
	if leaf == nil {
		parsed, err := x509.ParseCertificate(serving.Certificate[0])
		if err != nil {
			return nil, ""
		}
		leaf = parsed
	}
	if ours != nil && leaf.CheckSignatureFrom(ours) == nil {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ours.Raw}), "kapi's CA"
	}
	if bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}), "self-signed --tls-cert-file"
	}
	return nil, ""
}
