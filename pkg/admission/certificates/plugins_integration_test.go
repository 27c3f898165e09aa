package certificates_test

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
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testwait.For(t, 30*time.Second, 20*time.Millisecond, what, cond)
}

// wantForbidden checks err is upstream's admission 403 (admission.NewForbidden:
// `<resource> "<name>" is forbidden: <reason>`).
func wantForbidden(t *testing.T, err error, resource, name, reason string) {
	t.Helper()
	want := fmt.Sprintf("%s %q is forbidden: %s", resource, name, reason)
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("got %v, want 403 %q", err, want)
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func csrPEM(t *testing.T, subject pkix.Name) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// caPEM is a self-signed CA certificate (a ClusterTrustBundle anchor, or
// any certificate for status.certificate).
func caPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// grant gives user a ClusterRole of rules (bound by a ClusterRoleBinding).
func grant(t *testing.T, admin kubernetes.Interface, name, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func signers(verb string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, Verbs: []string{verb}, ResourceNames: names}
}

// TestCertificateAdmissionPlugins: the default-on certificate plugins, on
// a server with RBAC, through client-go, with upstream's messages
// (plugin/pkg/admission/certificates/{approval,signing,subjectrestriction,ctbattest}
// admission.go, v1.37): approving needs "approve" on the signer (here
// granted through the "<domain>/*" wildcard), a status change needs
// "sign" (granted by exact name), kube-apiserver-client requests may not
// ask for system:masters, and a ClusterTrustBundle with a signer needs
// "attest" unless the update only touches finalizers or owner references.
func TestCertificateAdmissionPlugins(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	carolCfg, err := srv.AddUser(kapitest.User{Name: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	carol := kubernetes.NewForConfigOrDie(carolCfg)
	grant(t, admin, "csr-writer", "carol",
		rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status", "clustertrustbundles"},
			Verbs: []string{"get", "list", "create", "update", "patch"}})
	const signer = "example.com/widgets"

	// CertificateApproval.
	csr, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "widget"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, pkix.Name{CommonName: "w"}), SignerName: signer, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	approved := csr.DeepCopy()
	approved.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "OK"}}
	eventually(t, "carol may update CSRs", func() error {
		_, err := carol.CertificatesV1().CertificateSigningRequests().Get(ctx, "widget", metav1.GetOptions{})
		return err
	})
	_, err = carol.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, "widget", approved, metav1.UpdateOptions{})
	wantForbidden(t, err, "certificatesigningrequests.certificates.k8s.io", "widget", `user not permitted to approve requests with signerName "example.com/widgets"`)
	grant(t, admin, "widget-approver", "carol", signers("approve", "example.com/*"))
	eventually(t, "carol approves with approve on example.com/*", func() error {
		_, err := carol.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, "widget", approved, metav1.UpdateOptions{})
		return err
	})

	// CertificateSigning.
	signed, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "widget", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	signed.Status.Certificate = caPEM(t, "w")
	_, err = carol.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, signed, metav1.UpdateOptions{})
	wantForbidden(t, err, "certificatesigningrequests.certificates.k8s.io", "widget", `user not permitted to sign requests with signerName "example.com/widgets"`)
	grant(t, admin, "widget-signer", "carol", signers("sign", signer))
	eventually(t, "carol signs with sign on the signer", func() error {
		_, err := carol.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, signed, metav1.UpdateOptions{})
		return err
	})

	// CertificateSubjectRestriction: even the admin (system:masters).
	_, err = admin.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "masters"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, pkix.Name{CommonName: "root", Organization: []string{"dev", "system:masters"}}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{})
	wantForbidden(t, err, "certificatesigningrequests.certificates.k8s.io", "masters", "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")
	// Other signers may carry the group.
	if _, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "masters-elsewhere"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, pkix.Name{CommonName: "root", Organization: []string{"system:masters"}}),
			SignerName: signer, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{}); err != nil {
		t.Errorf("system:masters for another signer: %v", err)
	}

	// ClusterTrustBundleAttest.
	bundle := &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: "example.com:widgets:one"},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: string(caPEM(t, "anchor"))},
	}
	_, err = carol.CertificatesV1().ClusterTrustBundles().Create(ctx, bundle, metav1.CreateOptions{})
	wantForbidden(t, err, "clustertrustbundles.certificates.k8s.io", "example.com:widgets:one", `user not permitted to attest for signerName "example.com/widgets"`)
	// No signer: no check.
	if _, err := carol.CertificatesV1().ClusterTrustBundles().Create(ctx, &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: string(caPEM(t, "anchor"))},
	}, metav1.CreateOptions{}); err != nil {
		t.Errorf("bundle without signer: %v", err)
	}
	grant(t, admin, "widget-attester", "carol", signers("attest", signer))
	eventually(t, "carol attests", func() error {
		_, err := carol.CertificatesV1().ClusterTrustBundles().Create(ctx, bundle, metav1.CreateOptions{})
		return err
	})
	// Without attest, dave may only change GC fields.
	daveCfg, err := srv.AddUser(kapitest.User{Name: "dave"})
	if err != nil {
		t.Fatal(err)
	}
	dave := kubernetes.NewForConfigOrDie(daveCfg)
	grant(t, admin, "bundle-updater", "dave", rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"get", "update"}})
	var got *certificatesv1.ClusterTrustBundle
	eventually(t, "dave may get bundles", func() error {
		got, err = dave.CertificatesV1().ClusterTrustBundles().Get(ctx, bundle.Name, metav1.GetOptions{})
		return err
	})
	labelled := got.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	_, err = dave.CertificatesV1().ClusterTrustBundles().Update(ctx, labelled, metav1.UpdateOptions{})
	wantForbidden(t, err, "clustertrustbundles.certificates.k8s.io", bundle.Name, `user not permitted to attest for signerName "example.com/widgets"`)
	got.Finalizers = []string{"example.com/keep"}
	got, err = dave.CertificatesV1().ClusterTrustBundles().Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("finalizer-only update without attest: %v", err)
	}
	got.Finalizers = nil
	if _, err := dave.CertificatesV1().ClusterTrustBundles().Update(ctx, got, metav1.UpdateOptions{}); err != nil && !strings.Contains(err.Error(), "not found") {
		t.Fatalf("finalizer removal without attest: %v", err)
	}
}
