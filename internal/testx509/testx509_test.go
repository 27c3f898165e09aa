package testx509

import (
	"crypto/x509"
	"errors"
	"net"
	"testing"
)

// TestLeaf checks the properties the callers' tests turn on: the
// signature algorithm, a SAN extension or none, the CA's name in a
// verification error.
func TestLeaf(t *testing.T) {
	ca := NewCA(t, "testx509-ca", RSA)
	parse := func(alg x509.SignatureAlgorithm, names Names) *x509.Certificate {
		t.Helper()
		c, err := x509.ParseCertificate(ca.Leaf(t, "localhost", alg, names).Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	opts := x509.VerifyOptions{DNSName: "localhost", Roots: ca.Pool()}

	san := parse(x509.SHA256WithRSA, SAN("localhost", net.ParseIP("127.0.0.1")))
	if _, err := san.Verify(opts); err != nil {
		t.Errorf("a leaf with SANs: %v", err)
	}
	if len(san.IPAddresses) != 1 || !san.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("IP SANs %v", san.IPAddresses)
	}

	cnOnly := parse(x509.SHA256WithRSA, CNOnly)
	if cnOnly.Subject.CommonName != "localhost" || len(cnOnly.DNSNames) != 0 || len(cnOnly.IPAddresses) != 0 {
		t.Errorf("CN-only leaf: %v, %v, %v", cnOnly.Subject, cnOnly.DNSNames, cnOnly.IPAddresses)
	}
	if _, err := cnOnly.Verify(opts); err == nil || err.Error() != "x509: certificate relies on legacy Common Name field, use SANs instead" {
		t.Errorf("CN-only leaf verified with %v", err)
	}

	sha1 := parse(x509.SHA1WithRSA, SAN("localhost"))
	var uae x509.UnknownAuthorityError
	if _, err := sha1.Verify(opts); !errors.As(err, &uae) || uae.Error() != `x509: certificate signed by unknown authority (possibly because of "x509: cannot verify signature: insecure algorithm SHA1-RSA" while trying to verify candidate authority certificate "testx509-ca")` {
		t.Errorf("SHA-1 leaf verified with %v", err)
	}

	ec := NewCA(t, "testx509-ecdsa-ca", ECDSA)
	leaf, err := x509.ParseCertificate(ec.Leaf(t, "localhost", 0, SAN("localhost")).Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.SignatureAlgorithm != x509.ECDSAWithSHA256 {
		t.Errorf("ECDSA leaf signed with %v", leaf.SignatureAlgorithm)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: ec.Pool()}); err != nil {
		t.Errorf("ECDSA leaf: %v", err)
	}

	self := SelfSigned(t, "127.0.0.1", ECDSA, 0, CNOnly).Leaf
	if self.Issuer.String() != self.Subject.String() || self.CheckSignature(self.SignatureAlgorithm, self.RawTBSCertificate, self.Signature) != nil || len(self.DNSNames)+len(self.IPAddresses) != 0 {
		t.Errorf("self-signed leaf: issuer %v, subject %v, SANs %v %v", self.Issuer, self.Subject, self.DNSNames, self.IPAddresses)
	}
}
