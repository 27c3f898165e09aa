package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapi-dev/kapi/kapitest"
)

// userKubeconfig signs a client certificate for name in groups with the
// server's generated CA (<data-dir>/pki/ca.crt, ca.key) and writes a
// kubeconfig using it.
func userKubeconfig(t testing.TB, srv *kapitest.Server, name string, groups ...string) string {
	t.Helper()
	pkiDir := filepath.Join(srv.DataDir(), "pki")
	ca, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, "ca.crt"), filepath.Join(pkiDir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name, Organization: groups},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kapi"] = &clientcmdapi.Cluster{Server: srv.Config.Host, CertificateAuthorityData: srv.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	cfg.Contexts["kapi"] = &clientcmdapi.Context{Cluster: "kapi", AuthInfo: name}
	cfg.CurrentContext = "kapi"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubectlRBAC drives RBAC (kapi's default authorization mode) with
// kubectl 1.27 and 1.33 as the admin (system:masters), as a user whose
// certificate the test signs, and with --as: forbidden messages as
// upstream's filter writes them, a RoleBinding taking effect for the next
// request, auth can-i (and --list), auth whoami, escalation refused, and
// impersonation authorized by the impersonate verb.
func TestKubectlRBAC(t *testing.T) {
	binaries := kubectls(t)
	srv := kapitest.Start(t)
	admin := srv.Kubeconfig
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	for i, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			ns := "rbac-" + string(rune('a'+i))
			if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			bob := userKubeconfig(t, srv, "bob", "devs")
			run := func(kc string, args ...string) (string, string, error) {
				return runKubectl(t, kubectl, kc, args...)
			}
			wantErr := func(kc, want string, args ...string) {
				t.Helper()
				out, stderr, err := run(kc, args...)
				if err == nil || !strings.Contains(stderr, want) {
					t.Errorf("kubectl %s: got %q %q (%v), want an error with %q", strings.Join(args, " "), out, stderr, err, want)
				}
			}
			wantOut := func(kc, want string, args ...string) {
				t.Helper()
				out, stderr, err := run(kc, args...)
				if err != nil || !strings.Contains(out+stderr, want) {
					t.Errorf("kubectl %s: got %q %q (%v), want output with %q", strings.Join(args, " "), out, stderr, err, want)
				}
			}

			// Nothing bound: forbidden, as upstream words it.
			wantErr(bob, `Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "`+ns+`"`,
				"get", "pods", "-n", ns)
			wantErr(bob, `nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope`, "get", "nodes")
			if out, _, err := run(bob, "auth", "can-i", "list", "pods", "-n", ns); err == nil || out != "no\n" {
				t.Errorf("bob can-i list pods: got %q (%v), want no", out, err)
			}
			// What every authenticated user may do (system:basic-user,
			// system:discovery, system:public-info-viewer).
			if filepath.Base(kubectl) != "kubectl.1.27" {
				// kubectl 1.27 asks for selfsubjectreviews v1alpha1/v1beta1,
				// which kube-apiserver v1.37 no longer serves either.
				wantOut(bob, "bob", "auth", "whoami")
				wantOut(bob, "system:authenticated", "auth", "whoami")
			}
			wantOut(bob, "yes", "auth", "can-i", "create", "selfsubjectaccessreviews.authorization.k8s.io")
			wantOut(bob, "yes", "auth", "can-i", "get", "/version")

			// A RoleBinding to view: effective at the next request.
			wantOut(admin, "created", "create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob", "-n", ns)
			wantOut(bob, "No resources found", "get", "pods", "-n", ns)
			wantOut(bob, "yes", "auth", "can-i", "list", "deployments.apps", "-n", ns)
			if out, _, err := run(bob, "auth", "can-i", "delete", "pods", "-n", ns); err == nil || out != "no\n" {
				t.Errorf("bob can-i delete pods: got %q (%v), want no", out, err)
			}
			wantOut(bob, "pods ", "auth", "can-i", "--list", "-n", ns)
			wantOut(admin, "ClusterRole/view", "get", "rolebinding", "bob-view", "-n", ns, "-o", "wide")
			wantOut(admin, "bob", "get", "rolebinding", "bob-view", "-n", ns, "-o", "wide")

			// Escalation: bob may write roles and bindings, but only with
			// what he holds.
			wantOut(admin, "created", "create", "role", "rbac-writer", "--verb=create,get,update", "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io", "-n", ns)
			wantOut(admin, "created", "create", "rolebinding", "bob-rbac", "--role=rbac-writer", "--user=bob", "-n", ns)
			wantErr(bob, `is attempting to grant RBAC permissions not currently held:`, "create", "role", "secret-reader", "--verb=get", "--resource=secrets", "-n", ns)
			wantErr(bob, `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`, "create", "role", "secret-reader2", "--verb=get", "--resource=secrets", "-n", ns)
			wantOut(bob, "created", "create", "role", "pod-reader", "--verb=get,list", "--resource=pods", "-n", ns)
			wantErr(bob, `is attempting to grant RBAC permissions not currently held:`, "create", "rolebinding", "bob-admin", "--clusterrole=admin", "--user=bob", "-n", ns)
			wantOut(bob, "created", "create", "rolebinding", "alice-pods", "--role=pod-reader", "--user=alice", "-n", ns)

			// Impersonation: the admin may, bob may not.
			wantErr(admin, `pods is forbidden: User "carol" cannot list resource "pods" in API group "" in the namespace "`+ns+`"`, "get", "pods", "-n", ns, "--as=carol")
			wantOut(admin, "No resources found", "get", "pods", "-n", ns, "--as=alice")
			wantOut(admin, "yes", "auth", "can-i", "list", "pods", "-n", ns, "--as=bob")
			wantOut(admin, "yes", "auth", "can-i", "list", "pods", "-n", ns, "--as=carol", "--as-group=system:masters")
			bobConfig, err := clientcmd.BuildConfigFromFlags("", bob)
			if err != nil {
				t.Fatal(err)
			}
			bobConfig.Impersonate.UserName = "alice"
			_, err = kubernetes.NewForConfigOrDie(bobConfig).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			// Constrained impersonation (on by default since v1.36): the
			// first denial is the user-info mode's impersonate-on check.
			if want := `pods is forbidden: User "bob" cannot impersonate-on:user-info:list resource "pods" in API group "" in the namespace "` + ns + `"`; err == nil || err.Error() != want {
				t.Errorf("bob impersonating alice: got %v, want %s", err, want)
			}

			// auth reconcile as the admin.
			manifest := filepath.Join(t.TempDir(), "role.yaml")
			if err := os.WriteFile(manifest, []byte(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reconciled
  namespace: `+ns+`
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get"]
`), 0o600); err != nil {
				t.Fatal(err)
			}
			wantOut(admin, "reconciled", "auth", "reconcile", "-f", manifest)
			wantOut(admin, "configmaps", "get", "role", "reconciled", "-n", ns, "-o", "yaml")
		})
	}
}

// TestRBACDefaultingThroughTheServer: a binding sent without the apiGroups
// of its roleRef and subjects is stored with them (upstream's defaults),
// on create, merge patch and server-side apply.
func TestRBACDefaultingThroughTheServer(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	check := func(what string, b *rbacv1.ClusterRoleBinding) {
		t.Helper()
		if b.RoleRef.APIGroup != rbacv1.GroupName {
			t.Errorf("%s: roleRef apiGroup %q", what, b.RoleRef.APIGroup)
		}
		for _, s := range b.Subjects {
			want := rbacv1.GroupName
			if s.Kind == "ServiceAccount" {
				want = ""
			}
			if s.APIGroup != want {
				t.Errorf("%s: subject %s apiGroup %q, want %q", what, s.Name, s.APIGroup, want)
			}
		}
	}
	b, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "defaulted"},
		RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "ServiceAccount", Name: "sa", Namespace: "default"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("create", b)
	b, err = cs.RbacV1().ClusterRoleBindings().Patch(ctx, "defaulted", types.MergePatchType,
		[]byte(`{"subjects":[{"kind":"Group","name":"g"}]}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("merge patch", b)
	b, err = cs.RbacV1().ClusterRoleBindings().Patch(ctx, "applied", types.ApplyPatchType,
		[]byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"applied"},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"User","name":"a"}]}`),
		metav1.PatchOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	check("apply", b)
}

// sarService starts a SubjectAccessReview service on loopback HTTPS that
// allows bob to list configmaps and denies him secrets, and returns a
// kubeconfig file naming it and the resource reviews it was asked.
func sarService(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var asked []string
	svc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rev authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&rev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if a := rev.Spec.ResourceAttributes; a != nil {
			mu.Lock()
			asked = append(asked, rev.Spec.User+" "+a.Verb+" "+a.Resource)
			mu.Unlock()
			switch {
			case rev.Spec.User == "bob" && a.Resource == "configmaps" && a.Verb == "list":
				rev.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "the webhook likes bob"}
			case rev.Spec.User == "bob" && a.Resource == "secrets":
				rev.Status = authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "no secrets for bob"}
			}
		}
		_ = json.NewEncoder(w).Encode(&rev)
	}))
	t.Cleanup(svc.Close)
	file := authzWebhookKubeconfig(t, svc)
	return file, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// TestWebhookAuthorizationMode runs kapi with --authorization-mode=RBAC,Webhook
// against a SubjectAccessReview service on loopback HTTPS: what RBAC does
// not allow is asked of the webhook, whose allow, deny and reason reach
// the client, and selfsubjectrulesreviews say the rules are incomplete.
func TestWebhookAuthorizationMode(t *testing.T) {
	webhookFile, asked := sarService(t)
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-mode=RBAC,Webhook", "--authorization-webhook-config-file="+webhookFile))
	bobCfg, err := clientcmd.BuildConfigFromFlags("", userKubeconfig(t, srv, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	bob := kubernetes.NewForConfigOrDie(bobCfg)
	ctx := context.Background()
	if _, err := bob.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("bob lists configmaps (webhook allows): %v", err)
	}
	_, err = bob.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if want := `secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default": no secrets for bob`; err == nil || err.Error() != want {
		t.Errorf("bob lists secrets: got %v, want %s", err, want)
	}
	_, err = bob.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if want := `pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`; err == nil || err.Error() != want {
		t.Errorf("bob lists pods: got %v, want %s", err, want)
	}
	// RBAC decided the self review before the webhook was asked.
	for _, a := range asked() {
		if strings.Contains(a, "selfsubject") {
			t.Errorf("the webhook was asked %q, which RBAC allows", a)
		}
	}
	ssrr, err := bob.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, metav1.CreateOptions{})
	if err != nil || !ssrr.Status.Incomplete || ssrr.Status.EvaluationError == "" {
		t.Errorf("rules review: got %+v (%v), want incomplete with the webhook's evaluation error", ssrr, err)
	}
}

// TestStructuredAuthorizationConfig runs kapi with --authorization-config:
// RBAC, then the webhook only for configmaps (a CEL matchCondition), so a
// secrets request never reaches the webhook and gets RBAC's plain 403.
func TestStructuredAuthorizationConfig(t *testing.T) {
	webhookFile, asked := sarService(t)
	config := filepath.Join(t.TempDir(), "authz.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: RBAC
  name: rbac
- type: Webhook
  name: configmaps-webhook
  webhook:
    timeout: 5s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    authorizedTTL: 1m
    unauthorizedTTL: 1s
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: `+webhookFile+`
    matchConditions:
    - expression: has(request.resourceAttributes)
    - expression: request.resourceAttributes.resource == "configmaps"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-config="+config))
	bobCfg, err := clientcmd.BuildConfigFromFlags("", userKubeconfig(t, srv, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	bob := kubernetes.NewForConfigOrDie(bobCfg)
	ctx := context.Background()
	if _, err := bob.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("bob lists configmaps (webhook allows): %v", err)
	}
	_, err = bob.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if want := `secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default"`; err == nil || err.Error() != want {
		t.Errorf("bob lists secrets: got %v, want %s", err, want)
	}
	if got := asked(); !slices.Equal(got, []string{"bob list configmaps"}) {
		t.Errorf("the webhook was asked %q, want only bob's configmaps list", got)
	}
	// A bad file stops the server at start.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := kapitest.StartE(t.TempDir(), nil, kapitest.WithFlags("--authorization-config="+bad)); err == nil {
		_ = s.Stop()
		t.Error("a configuration without authorizers was accepted")
	} else if !strings.Contains(err.Error(), "at least one authorization mode must be defined") {
		t.Errorf("bad config: %v", err)
	}
}

// authzWebhookKubeconfig writes the kubeconfig (--authorization-webhook-
// config-file) of an authorization webhook served by svc at /authorize.
func authzWebhookKubeconfig(t *testing.T, svc *httptest.Server) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["authz"] = &clientcmdapi.Cluster{Server: svc.URL + "/authorize",
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: svc.Certificate().Raw})}
	cfg.AuthInfos["kapi"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "authz", AuthInfo: "kapi"}
	cfg.CurrentContext = "c"
	file := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}
