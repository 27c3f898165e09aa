package authenticator

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testBundle is a generated kapi PKI, in memory.
func testBundle(t testing.TB) *pki.Bundle {
	t.Helper()
	b, err := pki.Ensure(pki.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func caTemplate(cn string) *x509.Certificate {
	return &x509.Certificate{
		Subject:  pkix.Name{CommonName: cn},
		IsCA:     true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
}

func clientTemplate(cn string, orgs ...string) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}
