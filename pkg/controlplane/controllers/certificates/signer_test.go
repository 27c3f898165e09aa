package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func newCA(t *testing.T, notAfter time.Time) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func newRequest(t *testing.T, tmpl *x509.CertificateRequest) *x509.CertificateRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestSignerRestrictions: each kubernetes.io signer's rules and messages
// (upstream's signer.go and certificates helpers.go, v1.37).
func TestSignerRestrictions(t *testing.T) {
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	tests := []struct {
		signer string
		req    *x509.CertificateRequest
		usages []certificatesv1.KeyUsage
		want   string
	}{
		{certificatesv1.KubeAPIServerClientSignerName, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, []certificatesv1.KeyUsage{"client auth", "digital signature"}, ""},
		{certificatesv1.KubeAPIServerClientSignerName, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, []certificatesv1.KeyUsage{"client auth", "server auth"}, "invalid usage for client certificate: server auth"},
		{certificatesv1.KubeAPIServerClientSignerName, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, []certificatesv1.KeyUsage{"digital signature"}, "missing required usage for client certificate: client auth"},
		{certificatesv1.KubeAPIServerClientKubeletSignerName, &x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{"client auth", "digital signature", "key encipherment"}, ""},
		{certificatesv1.KubeAPIServerClientKubeletSignerName, &x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{"client auth", "digital signature"}, ""},
		{certificatesv1.KubeAPIServerClientKubeletSignerName, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1"}}, []certificatesv1.KeyUsage{"client auth", "digital signature"}, "subject organization is not system:nodes"},
		{certificatesv1.KubeAPIServerClientKubeletSignerName, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}}, []certificatesv1.KeyUsage{"client auth", "digital signature"}, "subject common name does not begin with system:node:"},
		{certificatesv1.KubeAPIServerClientKubeletSignerName, &x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, []certificatesv1.KeyUsage{"client auth", "digital signature"}, "DNS subjectAltNames are not allowed"},
		{certificatesv1.KubeAPIServerClientKubeletSignerName, &x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{"client auth"}, "usages did not match [client auth digital signature key encipherment]"},
		{certificatesv1.KubeletServingSignerName, &x509.CertificateRequest{Subject: node, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}, []certificatesv1.KeyUsage{"server auth", "digital signature"}, ""},
		{certificatesv1.KubeletServingSignerName, &x509.CertificateRequest{Subject: node}, []certificatesv1.KeyUsage{"server auth", "digital signature"}, "DNS or IP subjectAltName is required"},
	}
	for _, tc := range tests {
		req := newRequest(t, tc.req)
		err := signerChecks[tc.signer](req, tc.usages)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s %v %v: got %q, want %q", tc.signer, tc.req.Subject, tc.usages, got, tc.want)
		}
	}
}

// TestSignDurations: --cluster-signing-duration caps and defaults the
// lifetime; expirationSeconds shortens it down to 10 minutes; short
// certificates still last what was asked from now; never past the CA.
func TestSignDurations(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, key := newCA(t, now.Add(30*24*time.Hour))
	s := &Signer{cfg: SignerConfig{CA: ca, Key: key, Duration: 7 * 24 * time.Hour, Now: func() time.Time { return now }}}
	req := newRequest(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane", Organization: []string{"dev"}}})
	tests := []struct {
		seconds             *int32
		notBefore, notAfter time.Time
	}{
		{nil, now.Add(-backdate), now.Add(-backdate).Add(7 * 24 * time.Hour)},
		{ptr.To[int32](86400), now.Add(-backdate), now.Add(-backdate).Add(24 * time.Hour)},
		{ptr.To[int32](3600), now.Add(-backdate), now.Add(time.Hour)},
		{ptr.To[int32](60), now.Add(-backdate), now.Add(10 * time.Minute)},
		{ptr.To[int32](400 * 86400), now.Add(-backdate), now.Add(-backdate).Add(7 * 24 * time.Hour)},
	}
	for _, tc := range tests {
		out, err := s.Sign(req, []certificatesv1.KeyUsage{"client auth", "digital signature", "key encipherment"}, tc.seconds)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(out)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if !cert.NotBefore.Equal(tc.notBefore) || !cert.NotAfter.Equal(tc.notAfter) {
			t.Errorf("expirationSeconds %v: validity %v - %v, want %v - %v", tc.seconds, cert.NotBefore, cert.NotAfter, tc.notBefore, tc.notAfter)
		}
		if err := cert.CheckSignatureFrom(ca); err != nil {
			t.Errorf("not signed by the CA: %v", err)
		}
		if cert.IsCA || cert.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment || len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth {
			t.Errorf("usages %v %v isCA %v", cert.KeyUsage, cert.ExtKeyUsage, cert.IsCA)
		}
		if cert.Subject.CommonName != "jane" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "dev" {
			t.Errorf("subject %v", cert.Subject)
		}
	}
	s.cfg.Duration = 365 * 24 * time.Hour
	out, err := s.Sign(req, []certificatesv1.KeyUsage{"client auth"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(out)
	cert, _ := x509.ParseCertificate(block.Bytes)
	if !cert.NotAfter.Equal(ca.NotAfter) {
		t.Errorf("notAfter %v, want the CA's %v", cert.NotAfter, ca.NotAfter)
	}
	if _, _, err := KeyUsages([]certificatesv1.KeyUsage{"client auth", "flying"}); err == nil || err.Error() != `unrecognized usage values: ["flying"]` {
		t.Errorf("unknown usage: %v", err)
	}
}

// TestCleanerExpired: upstream's cleaner durations (cleaner.go, v1.37).
func TestCleanerExpired(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	cond := func(typ certificatesv1.RequestConditionType, d time.Duration) []certificatesv1.CertificateSigningRequestCondition {
		return []certificatesv1.CertificateSigningRequestCondition{{Type: typ, Status: "True", LastUpdateTime: ago(d)}}
	}
	ca, key := newCA(t, now.Add(time.Hour))
	expiredSigner := &Signer{cfg: SignerConfig{CA: ca, Key: key, Duration: time.Hour, Now: func() time.Time { return now.Add(-2 * time.Hour) }}}
	expiredCert, err := expiredSigner.Sign(newRequest(t, &x509.CertificateRequest{}), []certificatesv1.KeyUsage{"client auth"}, ptr.To[int32](600))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		csr  certificatesv1.CertificateSigningRequest
		want bool
	}{
		{"pending 23h", certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ago(23 * time.Hour)}}, false},
		{"pending 25h", certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ago(25 * time.Hour)}}, true},
		{"denied 59m", certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond("Denied", 59*time.Minute)}}, false},
		{"denied 61m", certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond("Denied", 61*time.Minute)}}, true},
		{"failed 61m", certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond("Failed", 61*time.Minute)}}, true},
		{"approved 2h, not issued", certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ago(2 * time.Hour)}, Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond("Approved", 2*time.Hour)}}, false},
		{"issued 61m", certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond("Approved", 61*time.Minute), Certificate: []byte("x")}}, true},
		{"issued 10m, certificate expired", certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond("Approved", 10*time.Minute), Certificate: expiredCert}}, true},
	}
	for _, tc := range tests {
		if got := Expired(&tc.csr, now); got != tc.want {
			t.Errorf("%s: Expired %v, want %v", tc.name, got, tc.want)
		}
	}
}
