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
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// newPCR is a PodCertificateRequest for a fresh P-256 key (returned)
// without maxExpirationSeconds.
func newPCR(t *testing.T, name string) (*certificatesv1.PodCertificateRequest, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: "example.com/pods", PodName: "web-0", PodUID: "pod-uid-1",
			ServiceAccountName: "default", ServiceAccountUID: "sa-uid-1", NodeName: "node-1", NodeUID: "node-uid-1",
			StubPKCS10Request: stub,
		},
	}, key
}

// issueStatus is an Issued status for pub: a 2h leaf from a fresh CA,
// refresh after 1h.
func issueStatus(t *testing.T, pub any) certificatesv1.PodCertificateRequestStatus {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now().Truncate(time.Second)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pods-ca"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), NotBefore: now, NotAfter: now.Add(2 * time.Hour)}, ca, pub, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Signed", Message: "signed by the test"}},
		CertificateChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        &metav1.Time{Time: now}, NotAfter: &metav1.Time{Time: now.Add(2 * time.Hour)}, BeginRefreshAt: &metav1.Time{Time: now.Add(time.Hour)},
	}
}

// TestPodCertificateRequests: certificates.k8s.io/v1 podcertificaterequests
// (served by default from v1.37) through client-go and kubectl: discovery,
// defaulting of maxExpirationSeconds (create and merge patch), status
// reset on create, the immutable spec, /status issuing that needs the
// "sign" verb on the signer (upstream's StatusStrategy: a 422 with a
// Forbidden cause on spec.signerName), the Issued status frozen after, a
// field selector, and the table.
func TestPodCertificateRequests(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	cs := mustClientset(t, srv.Config)
	ns := "pcr"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	rl, err := cs.Discovery().ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, r := range rl.APIResources {
		if strings.HasPrefix(r.Name, "podcertificaterequests") {
			found = append(found, fmt.Sprintf("%s %s %v", r.Name, r.Kind, r.Namespaced))
		}
	}
	if fmt.Sprint(found) != "[podcertificaterequests PodCertificateRequest true podcertificaterequests/status PodCertificateRequest true]" {
		t.Errorf("discovery: %v", found)
	}

	pcrs := cs.CertificatesV1().PodCertificateRequests(ns)
	req, key := newPCR(t, "one")
	req.Status.CertificateChain = "smuggled"
	got, err := pcrs.Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got.Spec.MaxExpirationSeconds == nil || *got.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("maxExpirationSeconds %v, want the default 86400", got.Spec.MaxExpirationSeconds)
	}
	if got.Status.CertificateChain != "" {
		t.Errorf("status kept on create: %q", got.Status.CertificateChain)
	}

	// Merge-patching maxExpirationSeconds away defaults it again, and is
	// then no change (the spec is immutable).
	// The same holds for every write path: were the default not applied,
	// the spec would change and be refused as immutable.
	for _, p := range []struct {
		pt   types.PatchType
		body string
	}{
		{types.MergePatchType, `{"spec":{"maxExpirationSeconds":null}}`},
		{types.StrategicMergePatchType, `{"spec":{"maxExpirationSeconds":null}}`},
		{types.JSONPatchType, `[{"op":"remove","path":"/spec/maxExpirationSeconds"}]`},
	} {
		if _, err := pcrs.Patch(ctx, "one", p.pt, []byte(p.body), metav1.PatchOptions{}); err != nil {
			t.Errorf("%s patch removing maxExpirationSeconds: %v", p.pt, err)
		}
	}
	put := got.DeepCopy()
	put.Spec.MaxExpirationSeconds = nil
	put.ResourceVersion = ""
	if cur, err := pcrs.Get(ctx, "one", metav1.GetOptions{}); err == nil {
		put.ResourceVersion = cur.ResourceVersion
	}
	if _, err := pcrs.Update(ctx, put, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update without maxExpirationSeconds: %v", err)
	}
	// Changing the spec is refused.
	_, err = pcrs.Patch(ctx, "one", types.MergePatchType, []byte(`{"spec":{"podName":"web-1"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("spec change: %v, want 422 field is immutable", err)
	}
	// Invalid create: upstream's messages.
	bad, _ := newPCR(t, "bad")
	bad.Spec.PodUID = ""
	_, err = pcrs.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.podUID: Invalid value: "": must not be empty`) {
		t.Errorf("create without podUID: %v", err)
	}

	// Issuing needs "sign".
	signerCfg, err := srv.AddUser(kapitest.User{Name: "pod-signer"})
	if err != nil {
		t.Fatal(err)
	}
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"podcertificaterequests", "podcertificaterequests/status"}, Verbs: []string{"get", "list", "update"}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pod-signer"}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-signer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pod-signer"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "pod-signer"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	signer := kubernetes.NewForConfigOrDie(signerCfg).CertificatesV1().PodCertificateRequests(ns)
	var cur *certificatesv1.PodCertificateRequest
	eventually(t, 30*time.Second, "the signer may get requests", func() error {
		cur, err = signer.Get(ctx, "one", metav1.GetOptions{})
		return err
	})
	cur.Status = issueStatus(t, &key.PublicKey)
	_, err = signer.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	if want := `spec.signerName: Forbidden: User "pod-signer" is not permitted to "sign" for signer "example.com/pods"`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("issuing without sign: %v, want 422 %q", err, want)
	}
	if _, err := cs.RbacV1().ClusterRoles().Update(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pod-signer"}, Rules: append(rules,
		rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, Verbs: []string{"sign"}, ResourceNames: []string{"example.com/*"}})}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the signer issues with sign on example.com/*", func() error {
		_, err := signer.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	issued, err := pcrs.Get(ctx, "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(issued.Status.Conditions) != 1 || issued.Status.Conditions[0].LastTransitionTime.IsZero() || issued.Status.CertificateChain == "" {
		t.Errorf("issued status: %+v", issued.Status)
	}
	// The stored Issued condition is kept whatever the update says (as
	// upstream's preserveConditionInstances); the other fields are frozen.
	issued.Status.Conditions[0].Message = "rewritten"
	issued.Status.BeginRefreshAt = &metav1.Time{Time: issued.Status.BeginRefreshAt.Add(time.Minute)}
	_, err = pcrs.UpdateStatus(ctx, issued, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable after PodCertificateRequest is issued, denied, or failed") {
		t.Errorf("rewriting an issued status: %v", err)
	}

	// A second request, denied by the admin.
	two, _ := newPCR(t, "two")
	two.Spec.PodName = "web-1"
	two.Spec.MaxExpirationSeconds = new(int32)
	*two.Spec.MaxExpirationSeconds = 7200
	if two, err = pcrs.Create(ctx, two, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	two.Status.Conditions = []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "UnsupportedKeyType", Message: "no"}}
	if _, err := pcrs.UpdateStatus(ctx, two, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("deny: %v", err)
	}
	list, err := pcrs.List(ctx, metav1.ListOptions{FieldSelector: "spec.podName=web-1"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "two" {
		t.Errorf("field selector spec.podName=web-1: %v %v", list, err)
	}

	for _, kubectl := range kubectlPair(t) {
		out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "get", "podcertificaterequests", "-n", ns, "one", "two")
		if err != nil {
			t.Fatalf("%s get: %v %s", kubectl, err, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME PODNAME SERVICEACCOUNTNAME NODENAME SIGNERNAME STATE UNVERIFIEDUSERANNOTATIONS" {
			t.Fatalf("%s get: %q", kubectl, out)
		}
		// Columns as kube-apiserver v1.37.2 prints them (no AGE; see the
		// podcertificaterequest registry's TableConvertor).
		for i, want := range []string{"one web-0 default node-1 example.com/pods Issued <none>", "two web-1 default node-1 example.com/pods Denied <none>"} {
			if f := strings.Fields(lines[i+1]); strings.Join(f, " ") != want {
				t.Errorf("%s row %d: %q, want %q", kubectl, i, lines[i+1], want)
			}
		}
		// Create from a manifest (maxExpirationSeconds defaulted).
		three, _ := newPCR(t, "three-"+filepath.Base(kubectl)[len("kubectl."):])
		three.Name = strings.ReplaceAll(three.Name, ".", "-")
		manifest := fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: PodCertificateRequest
metadata:
  name: %s
  namespace: %s
spec:
  signerName: example.com/pods
  podName: web-2
  podUID: pod-uid-2
  serviceAccountName: default
  serviceAccountUID: sa-uid-1
  nodeName: node-1
  nodeUID: node-uid-1
  stubPKCS10Request: %s
`, three.Name, ns, base64.StdEncoding.EncodeToString(three.Spec.StubPKCS10Request))
		path := filepath.Join(t.TempDir(), "pcr.yaml")
		if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "apply", "--server-side", "-f", path); err != nil {
			t.Fatalf("%s apply --server-side: %v %s %s", kubectl, err, out, stderr)
		}
		out, _, err = runKubectl(t, kubectl, srv.Kubeconfig, "get", "podcertificaterequest", "-n", ns, three.Name, "-o", "jsonpath={.spec.maxExpirationSeconds}")
		if err != nil || out != "86400" {
			t.Errorf("%s: applied request's maxExpirationSeconds %q (%v), want the default 86400", kubectl, out, err)
		}
	}
}
