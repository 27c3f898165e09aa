package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// leafSpec describes a certificate signed by the CA.
type leafSpec struct {
	certFile, keyFile string
	// caFile names the signing CA's certificate file, in messages.
	caFile string
	usage  x509.ExtKeyUsage
	cn     string
	orgs   []string
	// hosts are the SANs (IPs or DNS names), serving certificates only.
	hosts []string
}

// newKey makes the private key of every generated certificate.
//
// Upstream generates RSA-2048 keys; kapi uses ECDSA P-256 instead, which
// takes well under a millisecond where RSA-2048 takes tens to hundreds of
// milliseconds, and keeps the first start fast. kubectl, client-go and Go's
// TLS stack all accept P-256.
func newKey() (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ECDSA P-256 key: %w", err)
	}
	return key, nil
}

// newSerial returns a random positive 127-bit serial number.
func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 127)
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func newCA(cnPrefix string, now time.Time) (*keyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", cnPrefix, now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// The CA signs leaves only, never intermediates.
		MaxPathLen:     0,
		MaxPathLenZero: true,
	}
	return sign(tmpl, nil, key)
}

func newLeaf(ca *keyPair, spec leafSpec, now time.Time) (*keyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(leafValidity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: spec.cn, Organization: spec.orgs},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{spec.usage},
		BasicConstraintsValid: true,
	}
	tmpl.IPAddresses, tmpl.DNSNames = splitHosts(spec.hosts)
	// Go fills in the subject key ID of CAs only; leaves get one too, so
	// that errors and logs can name them (SKID=...).
	if tmpl.SubjectKeyId, err = keyID(key); err != nil {
		return nil, err
	}
	return sign(tmpl, ca, key)
}

// sign creates the certificate for tmpl and key, signed by parent (nil:
// self-signed).
func sign(tmpl *x509.Certificate, parent *keyPair, key *ecdsa.PrivateKey) (*keyPair, error) {
	parentCert, parentKey := tmpl, crypto.Signer(key)
	if parent != nil {
		parentCert, parentKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse generated certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key of %q: %w", tmpl.Subject.CommonName, err)
	}
	return &keyPair{
		cert:    cert,
		certPEM: encodeCert(der),
		key:     key,
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// keyID is a subject key identifier: the leftmost 160 bits of the SHA-256
// of the subjectPublicKey bit string (RFC 7093, section 2, method 1).
func keyID(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	var spki struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(der, &spki); err != nil {
		return nil, fmt.Errorf("decode public key: %w", err)
	}
	sum := sha256.Sum256(spki.PublicKey.Bytes)
	return sum[:20], nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
