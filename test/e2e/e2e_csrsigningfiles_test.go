package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// writeSigningCA writes a fresh ECDSA CA certificate and key (PEM) to dir
// and returns their paths and the certificate.
func writeSigningCA(t *testing.T, dir, name string) (certFile, keyFile string, ca *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if ca, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, ca
}

// approveCSR creates a CSR for subject with signer and usages, approves
// it through /approval and returns its name and key (PEM).
func approveCSR(t *testing.T, cs kubernetes.Interface, signer string, subject pkix.Name, usages ...certificatesv1.KeyUsage) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	keyPEM, reqPEM := newCSRPEM(t, subject)
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "files-"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: reqPEM, SignerName: signer, Usages: usages},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create csr: %v", err)
	}
	// The in-process approver may approve a kubelet client request first
	// (a conflict, then nothing to do).
	name := csr.Name
	eventually(t, 30*time.Second, "approve csr "+name, func() error {
		csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range csr.Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved {
				return nil
			}
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test",
		})
		_, err = cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
		return err
	})
	return name, keyPEM
}

// issuedCertificate waits for the CSR's certificate.
func issuedCertificate(t *testing.T, cs kubernetes.Interface, name string) (*x509.Certificate, []byte) {
	t.Helper()
	var certPEM []byte
	eventually(t, 30*time.Second, "csr "+name+" is issued", func() error {
		csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(csr.Status.Certificate) == 0 {
			return fmt.Errorf("no certificate yet; conditions %+v", csr.Status.Conditions)
		}
		certPEM = csr.Status.Certificate
		return nil
	})
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("csr %s: certificate is not PEM: %q", name, certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert, certPEM
}

func verifiesWith(cert, ca *x509.Certificate) error {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	_, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

// TestClusterSigningCertFile: with --cluster-signing-cert-file and
// -key-file (kube-controller-manager's flags, which kapi takes as it runs
// csrsigning in-process), an approved kube-apiserver-client CSR is signed
// by that CA, not the cluster CA of --cert-dir, and with the CA also in
// --client-ca-file the certificate authenticates as the requested user
// and groups (SelfSubjectReview through client-go).
func TestClusterSigningCertFile(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, ca := writeSigningCA(t, dir, "signing-ca")
	srv := kapitest.Start(t, kapitest.WithFlags(
		"--cluster-signing-cert-file="+certFile, "--cluster-signing-key-file="+keyFile, "--client-ca-file="+certFile))
	cs := mustClientset(t, srv.Config)

	name, keyPEM := approveCSR(t, cs, certificatesv1.KubeAPIServerClientSignerName,
		pkix.Name{CommonName: "alice", Organization: []string{"team-a"}}, certificatesv1.UsageClientAuth)
	cert, certPEM := issuedCertificate(t, cs, name)
	if err := verifiesWith(cert, ca); err != nil {
		t.Fatalf("the issued certificate does not verify with --cluster-signing-cert-file's CA: %v", err)
	}
	if cert.Issuer.CommonName != "signing-ca" {
		t.Errorf("issuer %q, want signing-ca", cert.Issuer.CommonName)
	}

	userCfg := rest.AnonymousClientConfig(srv.Config)
	userCfg.CertData, userCfg.KeyData = certPEM, keyPEM
	ssr, err := mustClientset(t, userCfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the issued certificate: %v", err)
	}
	if u := ssr.Status.UserInfo; u.Username != "alice" || fmt.Sprint(u.Groups) != "[team-a system:authenticated]" {
		t.Errorf("authenticated as %q %v, want alice [team-a system:authenticated]", u.Username, u.Groups)
	}
}

// TestClusterSigningPerSignerFiles: with only
// --cluster-signing-kube-apiserver-client-{cert,key}-file, that signer
// signs with its CA and the other signers do not sign at all (as
// kube-controller-manager skips the signing loops given no files): an
// approved kube-apiserver-client-kubelet CSR stays unsigned.
func TestClusterSigningPerSignerFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, ca := writeSigningCA(t, dir, "client-ca")
	srv := kapitest.Start(t, kapitest.WithFlags(
		"--cluster-signing-kube-apiserver-client-cert-file="+certFile, "--cluster-signing-kube-apiserver-client-key-file="+keyFile))
	cs := mustClientset(t, srv.Config)

	kubelet, _ := approveCSR(t, cs, certificatesv1.KubeAPIServerClientKubeletSignerName,
		pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}},
		certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	name, _ := approveCSR(t, cs, certificatesv1.KubeAPIServerClientSignerName, pkix.Name{CommonName: "bob"}, certificatesv1.UsageClientAuth)
	cert, _ := issuedCertificate(t, cs, name)
	if err := verifiesWith(cert, ca); err != nil {
		t.Fatalf("kube-apiserver-client certificate does not verify with its signer's CA: %v", err)
	}
	// The kube-apiserver-client CSR, approved after the kubelet one, was
	// signed: the signer has seen both. Give it a moment more and check
	// the kubelet one is still unsigned.
	time.Sleep(500 * time.Millisecond)
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), kubelet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(csr.Status.Certificate) != 0 {
		t.Errorf("kube-apiserver-client-kubelet CSR was signed without a CA of its own: conditions %+v", csr.Status.Conditions)
	}
}
