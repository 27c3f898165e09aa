package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/kubeconfig"
)

// newCSRPEM returns a fresh ECDSA key (PEM) and a PKCS#10 request for
// subject signed with it (PEM).
func newCSRPEM(t testing.TB, subject pkix.Name) (keyPEM, csrPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// csrManifest is a CSR as the Kubernetes documentation's "Issue a
// certificate for a user" task writes it.
func csrManifest(name, signer string, request []byte, usages []string, expirationSeconds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: %s\nspec:\n", name)
	fmt.Fprintf(&b, "  request: %s\n  signerName: %s\n", base64.StdEncoding.EncodeToString(request), signer)
	if expirationSeconds > 0 {
		fmt.Fprintf(&b, "  expirationSeconds: %d\n", expirationSeconds)
	}
	b.WriteString("  usages:\n")
	for _, u := range usages {
		fmt.Fprintf(&b, "  - %s\n", u)
	}
	return b.String()
}

// TestKubectlCertificateApproveAndDeny: with each kubectl (1.27, 1.33 and
// the one on PATH), a user's client CSR made with kubectl apply is listed
// Pending with upstream's columns, approved with kubectl certificate
// approve, signed by the in-process csrsigning controller, and the issued
// certificate authenticates to kapi as the requested user and groups
// (SelfSubjectReview: kubectl auth whoami, or kubectl create of a
// SelfSubjectReview with 1.27, whose whoami asks v1beta1). A second CSR is
// denied with kubectl certificate deny and never signed; a kubelet client
// CSR with the wrong organization, approved, fails with upstream's
// SignerValidationFailure; one by the rules is auto-approved by
// csrapproving and issued.
func TestKubectlCertificateApproveAndDeny(t *testing.T) {
	binaries := kubectls(t)
	srv, err := memoryBackend.start()
	if err != nil {
		t.Fatal(err)
	}
	cs := mustClientset(t, srv.Config)
	ctx := context.Background()
	for i, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			dir := t.TempDir()
			user := fmt.Sprintf("jane-%d-%d", time.Now().UnixNano()%1e6, i)
			name := "csr-" + user
			keyPEM, reqPEM := newCSRPEM(t, pkix.Name{CommonName: user, Organization: []string{"dev-team"}})
			manifest := filepath.Join(dir, "csr.yaml")
			if err := os.WriteFile(manifest, []byte(csrManifest(name, certificatesv1.KubeAPIServerClientSignerName, reqPEM, []string{"client auth"}, 86400)), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.CertificatesV1().CertificateSigningRequests().Delete(ctx, name, metav1.DeleteOptions{}) })
			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "apply", "-f", manifest); err != nil {
				t.Fatalf("apply: %v\n%s%s", err, out, stderr)
			}
			out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "get", "csr", name)
			if err != nil {
				t.Fatalf("get csr: %v\n%s", err, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			// printers.go: NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION;
			// the requestor is the admin (kapi-admin of the generated PKI),
			// whatever the body said.
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION" {
				t.Fatalf("get csr: got\n%s", out)
			}
			cells := strings.Fields(lines[1])
			if len(cells) != 6 || cells[0] != name || cells[2] != certificatesv1.KubeAPIServerClientSignerName || cells[4] != "24h" || cells[5] != "Pending" {
				t.Errorf("get csr row: got %q", lines[1])
			}

			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "certificate", "approve", name); err != nil || !strings.Contains(out, "approved") {
				t.Fatalf("certificate approve: %q %v\n%s", out, err, stderr)
			}
			var certPEM []byte
			eventually(t, 30*time.Second, "the certificate is issued", func() error {
				csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
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
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			// expirationSeconds honoured (upstream backdates 5 minutes).
			if life := cert.NotAfter.Sub(cert.NotBefore); life != 24*time.Hour {
				t.Errorf("certificate lifetime %v, want 24h", life)
			}
			if cert.Subject.CommonName != user || len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth || cert.IsCA {
				t.Errorf("certificate subject %v ext usages %v isCA %v", cert.Subject, cert.ExtKeyUsage, cert.IsCA)
			}
			out, _, _ = runKubectl(t, kubectl, srv.Kubeconfig, "get", "csr", name, "--no-headers")
			if f := strings.Fields(out); len(f) != 6 || f[5] != "Approved,Issued" {
				t.Errorf("get csr after signing: %q, want condition Approved,Issued", out)
			}

			userConfig := filepath.Join(dir, "user.kubeconfig")
			if err := kubeconfig.WriteAdmin(userConfig, srv.Config.Host, srv.Config.CAData, certPEM, keyPEM); err != nil {
				t.Fatal(err)
			}
			var who string
			if strings.HasSuffix(kubectl, ".1.27") {
				ssr := filepath.Join(dir, "ssr.yaml")
				if err := os.WriteFile(ssr, []byte("apiVersion: authentication.k8s.io/v1\nkind: SelfSubjectReview\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				// kubectl 1.27 validates client-side by listing CRDs, which
				// this user may not do under RBAC (as on kube-apiserver).
				who, stderr, err = runKubectl(t, kubectl, userConfig, "create", "--validate=false", "-f", ssr, "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
			} else {
				who, stderr, err = runKubectl(t, kubectl, userConfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
			}
			if want := user + ` ["dev-team","system:authenticated"]`; err != nil || who != want {
				t.Errorf("whoami with the issued certificate: got %q (%v %s), want %q", who, err, stderr, want)
			}

			// Deny: Denied condition, never signed.
			denied := name + "-denied"
			_, req2 := newCSRPEM(t, pkix.Name{CommonName: user})
			if err := os.WriteFile(manifest, []byte(csrManifest(denied, certificatesv1.KubeAPIServerClientSignerName, req2, []string{"client auth"}, 0)), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cs.CertificatesV1().CertificateSigningRequests().Delete(ctx, denied, metav1.DeleteOptions{})
			})
			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "create", "-f", manifest); err != nil {
				t.Fatalf("create: %v\n%s%s", err, out, stderr)
			}
			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "certificate", "deny", denied); err != nil || !strings.Contains(out, "denied") {
				t.Fatalf("certificate deny: %q %v\n%s", out, err, stderr)
			}
			out, _, _ = runKubectl(t, kubectl, srv.Kubeconfig, "get", "csr", denied, "--no-headers")
			if f := strings.Fields(out); len(f) != 6 || f[4] != "<none>" || f[5] != "Denied" {
				t.Errorf("get denied csr: %q, want <none> duration and Denied", out)
			}

			// A kubelet client CSR by the rules is approved by csrapproving
			// (its requester may create certificatesigningrequests/nodeclient:
			// the admin) and signed.
			good := name + "-node"
			_, req4 := newCSRPEM(t, pkix.Name{CommonName: "system:node:" + user, Organization: []string{"system:nodes"}})
			if err := os.WriteFile(manifest, []byte(csrManifest(good, certificatesv1.KubeAPIServerClientKubeletSignerName, req4, []string{"digital signature", "client auth"}, 0)), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.CertificatesV1().CertificateSigningRequests().Delete(ctx, good, metav1.DeleteOptions{}) })
			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "create", "-f", manifest); err != nil {
				t.Fatalf("create: %v\n%s%s", err, out, stderr)
			}
			eventually(t, 30*time.Second, "the kubelet CSR is auto-approved and issued", func() error {
				csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, good, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if len(csr.Status.Certificate) == 0 || len(csr.Status.Conditions) != 1 {
					return fmt.Errorf("conditions %+v, certificate %d bytes", csr.Status.Conditions, len(csr.Status.Certificate))
				}
				if c := csr.Status.Conditions[0]; c.Type != certificatesv1.CertificateApproved || c.Reason != "AutoApproved" || c.Message != "Auto approving kubelet client certificate after SubjectAccessReview." {
					t.Errorf("approval condition %+v", c)
				}
				return nil
			})

			// A kubelet client CSR outside the signer's rules fails.
			bad := name + "-kubelet"
			_, req3 := newCSRPEM(t, pkix.Name{CommonName: "system:node:" + user, Organization: []string{"not-nodes"}})
			if err := os.WriteFile(manifest, []byte(csrManifest(bad, certificatesv1.KubeAPIServerClientKubeletSignerName, req3, []string{"digital signature", "client auth"}, 0)), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.CertificatesV1().CertificateSigningRequests().Delete(ctx, bad, metav1.DeleteOptions{}) })
			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "create", "-f", manifest); err != nil {
				t.Fatalf("create: %v\n%s%s", err, out, stderr)
			}
			if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "certificate", "approve", bad); err != nil {
				t.Fatalf("certificate approve: %q %v\n%s", out, err, stderr)
			}
			eventually(t, 30*time.Second, "the kubelet CSR fails", func() error {
				csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, bad, metav1.GetOptions{})
				if err != nil {
					return err
				}
				for _, c := range csr.Status.Conditions {
					if c.Type == certificatesv1.CertificateFailed {
						if c.Reason != "SignerValidationFailure" || c.Message != "subject organization is not system:nodes" || len(csr.Status.Certificate) > 0 {
							t.Errorf("failed condition %+v, certificate %d bytes", c, len(csr.Status.Certificate))
						}
						return nil
					}
				}
				return fmt.Errorf("conditions %+v", csr.Status.Conditions)
			})
		})
	}
}
