package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

func TestServingTrust(t *testing.T) {
	now := time.Now()
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return c, key
	}
	leafFrom := func(parent *x509.Certificate, parentKey *ecdsa.PrivateKey) []byte {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	pemOf := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }

	ours, oursKey := newCA("kapi")
	other, otherKey := newCA("other")
	signedByOurs := leafFrom(ours, oursKey)
	signedByOther := leafFrom(other, otherKey)
	selfSigned := leafFrom(nil, nil)

	for _, tc := range []struct {
		name       string
		chain      [][]byte
		wantPEM    []byte
		wantSource string
	}{
		{"chain after the leaf", [][]byte{signedByOther, other.Raw}, pemOf(other.Raw), "chain in --tls-cert-file"},
		{"signed by kapi's CA", [][]byte{signedByOurs}, pemOf(ours.Raw), "kapi's CA"},
		{"self-signed leaf", [][]byte{selfSigned}, pemOf(selfSigned), "self-signed --tls-cert-file"},
		{"unknown issuer", [][]byte{signedByOther}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotPEM, gotSource := ServingTrust(tls.Certificate{Certificate: tc.chain}, ours)
			if !bytes.Equal(gotPEM, tc.wantPEM) || gotSource != tc.wantSource {
				t.Errorf("got %q (%s), want %q (%s)", gotPEM, gotSource, tc.wantPEM, tc.wantSource)
			}
		})
	}
}
