package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/auth/tokencache"
	"github.com/kapi-dev/kapi/pkg/server/options"
)

// authnServer starts a server with a --token-auth-file holding one user,
// "static-token" -> alice (uid 1001) in groups dev and ops.
func authnServer(t *testing.T, flags ...string) *kapitest.Server {
	t.Helper()
	srv, _ := authnServerWithClock(t, flags...)
	return srv
}

// expireTokens moves a server's token cache clock past the cache's TTL:
// every cached token authentication has expired.
func expireTokens(clock *clocktesting.FakeClock) {
	clock.Step(tokencache.DefaultSuccessTTL)
}

// authnServerWithClock is authnServer with its token cache on a clock
// the test moves.
func authnServerWithClock(t *testing.T, flags ...string) (*kapitest.Server, *clocktesting.FakeClock) {
	t.Helper()
	clock := clocktesting.NewFakeClock(time.Now())
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("static-token,alice,1001,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := kapitest.Start(t, kapitest.WithFlags(append([]string{"--token-auth-file=" + tokens}, flags...)...),
		kapitest.WithOptions(func(o *kapitest.Options) { o.TokenCacheNow = clock.Now }))
	// These tests are about who is calling, not what they may do: every
	// authenticated identity may do everything (RBAC, kapi's default, is
	// tested in e2e_rbac_test.go). Anonymous requests stay under RBAC.
	_, err := kubernetes.NewForConfigOrDie(srv.Config).RbacV1().ClusterRoleBindings().Create(context.Background(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "authn-test-authenticated"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:authenticated"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bind the authenticated users: %v", err)
	}
	return srv, clock
}

// tokenConfig is the server's address and CA with token as the only
// credential.
func tokenConfig(srv *kapitest.Server, token string) *rest.Config {
	return &rest.Config{
		Host:            srv.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: srv.Config.TLSClientConfig.CAData, CAFile: srv.Config.TLSClientConfig.CAFile},
		BearerToken:     token,
		QPS:             -1,
	}
}

// whoami is a SelfSubjectReview with token.
func whoami(t *testing.T, srv *kapitest.Server, token string) (authenticationv1.UserInfo, error) {
	t.Helper()
	cs := mustClientset(t, tokenConfig(srv, token))
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// getWithToken GETs path with token alone and returns the status and body.
func getWithToken(t *testing.T, srv *kapitest.Server, token, path string) (int, []byte) {
	t.Helper()
	cfg := tokenConfig(srv, "")
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, srv.Config.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// serviceAccount creates namespace/name and returns it once created.
func serviceAccount(t *testing.T, cs kubernetes.Interface, namespace, name string) *corev1.ServiceAccount {
	t.Helper()
	ctx := context.Background()
	if namespace != "default" {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sa, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sa
}

// TestAuthnStaticAndServiceAccountTokens: a --token-auth-file user and a
// TokenRequest token authenticate (SelfSubjectReview, a list), with the
// identity upstream gives them.
func TestAuthnStaticAndServiceAccountTokens(t *testing.T) {
	srv := authnServer(t)
	ctx := context.Background()
	admin := mustClientset(t, srv.Config)

	u, err := whoami(t, srv, "static-token")
	if err != nil {
		t.Fatalf("whoami with the static token: %v", err)
	}
	if u.Username != "alice" || u.UID != "1001" || strings.Join(u.Groups, ",") != "dev,ops,system:authenticated" {
		t.Errorf("static token user: got %+v, want alice 1001 [dev ops system:authenticated]", u)
	}
	if _, err := mustClientset(t, tokenConfig(srv, "static-token")).CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list namespaces with the static token: %v", err)
	}

	sa := serviceAccount(t, admin, "team", "robot")
	tr, err := admin.CoreV1().ServiceAccounts("team").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	if got := *tr.Spec.ExpirationSeconds; got != 3600 {
		t.Errorf("default expirationSeconds: got %d, want 3600", got)
	}
	if want := []string{options.DefaultServiceAccountIssuer}; strings.Join(tr.Spec.Audiences, ",") != want[0] {
		t.Errorf("default audiences: got %q, want %q", tr.Spec.Audiences, want)
	}
	if d := time.Until(tr.Status.ExpirationTimestamp.Time); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("expirationTimestamp in %v, want about an hour", d)
	}
	u, err = whoami(t, srv, tr.Status.Token)
	if err != nil {
		t.Fatalf("whoami with the service account token: %v", err)
	}
	if u.Username != "system:serviceaccount:team:robot" || u.UID != string(sa.UID) ||
		strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:team,system:authenticated" ||
		len(u.Extra[serviceaccount.ExtraCredentialID]) != 1 || !strings.HasPrefix(u.Extra[serviceaccount.ExtraCredentialID][0], "JTI=") {
		t.Errorf("service account user: got %+v", u)
	}
	if _, err := mustClientset(t, tokenConfig(srv, tr.Status.Token)).CoreV1().Pods("team").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list pods with the service account token: %v", err)
	}

	// TokenReview: the API audience by default, another audience only for
	// a token issued for it.
	review := func(token string, auds ...string) authenticationv1.TokenReviewStatus {
		t.Helper()
		r, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: auds}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("TokenReview: %v", err)
		}
		return r.Status
	}
	if st := review(tr.Status.Token); !st.Authenticated || st.User.Username != "system:serviceaccount:team:robot" || strings.Join(st.Audiences, ",") != options.DefaultServiceAccountIssuer {
		t.Errorf("review of the token: got %+v", st)
	}
	if st := review(tr.Status.Token, "vault"); st.Authenticated || !strings.Contains(st.Error, "token audiences") {
		t.Errorf("review for another audience: got %+v, want unauthenticated with upstream's audience error", st)
	}
	vault, err := admin.CoreV1().ServiceAccounts("team").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := review(vault.Status.Token, "vault", "other"); !st.Authenticated || strings.Join(st.Audiences, ",") != "vault" {
		t.Errorf("review of a vault token for vault: got %+v", st)
	}
	if code, _ := getWithToken(t, srv, vault.Status.Token, "/api"); code != http.StatusUnauthorized {
		t.Errorf("a vault token against the API: got %d, want 401", code)
	}
	if st := review("static-token"); !st.Authenticated || st.User.Username != "alice" {
		t.Errorf("review of the static token: got %+v", st)
	}
	if st := review("static-token", "vault"); st.Authenticated {
		t.Errorf("review of the static token for vault: got %+v, want unauthenticated", st)
	}
}

// writeTokenKubeconfig writes a kubeconfig for srv whose only credential
// is token.
func writeTokenKubeconfig(t *testing.T, srv *kapitest.Server, token string) string {
	t.Helper()
	ca := srv.Config.TLSClientConfig.CAData
	if len(ca) == 0 && srv.Config.TLSClientConfig.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(srv.Config.TLSClientConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kapi"] = &clientcmdapi.Cluster{Server: srv.Config.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["kapi"] = &clientcmdapi.Context{Cluster: "kapi", AuthInfo: "user"}
	cfg.CurrentContext = "kapi"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAuthnKubectl: with kubectl 1.27 and 1.33 (and the one on PATH), a
// static token and a token from `kubectl create token` authenticate a
// request; `kubectl auth whoami` (kubectl >= 1.28: it asks
// authentication.k8s.io/v1, which is what v1.37 serves) shows who they are.
func TestAuthnKubectl(t *testing.T) {
	binaries := kubectls(t)
	srv := authnServer(t)
	admin := mustClientset(t, srv.Config)
	serviceAccount(t, admin, "team", "robot")
	if _, err := admin.CoreV1().Secrets("team").Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			token, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "create", "token", "robot", "-n", "team", "--duration=20m")
			if err != nil {
				t.Fatalf("kubectl create token: %v\n%s", err, stderr)
			}
			token = strings.TrimSpace(token)
			bound, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "create", "token", "robot", "-n", "team", "--bound-object-kind=Secret", "--bound-object-name=anchor")
			if err != nil {
				t.Fatalf("kubectl create token --bound-object-kind=Secret: %v\n%s", err, stderr)
			}
			bound = strings.TrimSpace(bound)
			for _, id := range []struct{ name, token, user string }{
				{"static", "static-token", "alice"},
				{"service account", token, "system:serviceaccount:team:robot"},
				{"secret-bound service account", bound, "system:serviceaccount:team:robot"},
			} {
				kc := writeTokenKubeconfig(t, srv, id.token)
				if out, stderr, err := runKubectl(t, kubectl, kc, "get", "namespace", "team", "-o", "name"); err != nil || out != "namespace/team\n" {
					t.Errorf("%s: kubectl get namespace team: got %q (%v)\n%s", id.name, out, err, stderr)
				}
				if strings.HasSuffix(kubectl, ".1.27") {
					continue // its whoami asks v1alpha1/v1beta1, which v1.37 no longer serves
				}
				out, stderr, err := runKubectl(t, kubectl, kc, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
				if err != nil || out != id.user {
					t.Errorf("%s: kubectl auth whoami: got %q (%v)\n%s, want %s", id.name, out, err, stderr, id.user)
				}
			}
			// A bad token: kubectl reports the 401 of its discovery request
			// as it does against kube-apiserver ("You must be logged in to
			// the server (the server has asked for the client to provide
			// credentials)").
			kc := writeTokenKubeconfig(t, srv, "not-a-token")
			_, stderr, err = runKubectl(t, kubectl, kc, "get", "namespaces")
			if err == nil || !strings.Contains(stderr, "You must be logged in to the server") {
				t.Errorf("kubectl with a bad token: got %v\n%s, want Unauthorized", err, stderr)
			}
		})
	}
}

// unauthorized checks that a request with token answers upstream's 401: a
// Status with reason Unauthorized and message "Unauthorized".
// revoked checks a token that has just stopped being valid, and that
// authenticated within the token cache's TTL: as kube-apiserver's, it
// keeps authenticating from the cache until the TTL has passed (no
// authenticator is asked again), then answers 401.
func revoked(t *testing.T, srv *kapitest.Server, clock *clocktesting.FakeClock, what, token string) {
	t.Helper()
	if code, body := getWithToken(t, srv, token, "/api/v1/namespaces"); code != http.StatusOK {
		t.Errorf("%s, within the cache's TTL: got %d %s, want 200 (cached, as upstream)", what, code, body)
	}
	expireTokens(clock)
	unauthorized(t, srv, what, token)
}

func unauthorized(t *testing.T, srv *kapitest.Server, what, token string) {
	t.Helper()
	code, body := getWithToken(t, srv, token, "/api/v1/namespaces")
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || code != http.StatusUnauthorized || st.Code != 401 ||
		st.Reason != metav1.StatusReasonUnauthorized || st.Message != "Unauthorized" || st.Kind != "Status" {
		t.Errorf("%s: got %d %s, want 401 with upstream's Unauthorized Status", what, code, body)
	}
}

// TestAuthnBadCredentials: every kind of bad bearer token answers 401
// (upstream's message "Unauthorized"), never a crash or another code; so
// do tokens of a deleted service account or bound object, and of a
// service account deleted and created again (another UID).
func TestAuthnBadCredentials(t *testing.T) {
	srv, clock := authnServerWithClock(t)
	ctx := context.Background()
	admin := mustClientset(t, srv.Config)
	sa := serviceAccount(t, admin, "team", "robot")

	key, err := serviceaccount.LoadPrivateKeyFile(filepath.Join(srv.Options.DataDir, "pki", serviceaccount.GeneratedKeyFile))
	if err != nil {
		t.Fatalf("the generated signing key: %v", err)
	}
	signer, err := serviceaccount.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := serviceaccount.NewSigner(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := func(edit func(c *serviceaccount.Claims)) serviceaccount.Claims {
		c := serviceaccount.Claims{
			Issuer:    options.DefaultServiceAccountIssuer,
			Subject:   "system:serviceaccount:team:robot",
			Audience:  serviceaccount.Audience{options.DefaultServiceAccountIssuer},
			Expiry:    serviceaccount.NewNumericDate(now.Add(time.Hour)),
			NotBefore: serviceaccount.NewNumericDate(now),
			IssuedAt:  serviceaccount.NewNumericDate(now),
			Kubernetes: &serviceaccount.KubernetesClaims{
				Namespace: "team",
				Svcacct:   serviceaccount.Ref{Name: "robot", UID: string(sa.UID)},
			},
		}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	sign := func(s *serviceaccount.Signer, c serviceaccount.Claims) string {
		tok, err := s.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// The hand-made token with no defect authenticates: the defects below
	// are what is refused.
	good := sign(signer, claims(nil))
	if u, err := whoami(t, srv, good); err != nil || u.Username != "system:serviceaccount:team:robot" {
		t.Fatalf("a well-formed hand-signed token: got %+v, %v", u, err)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	parts := strings.Split(good, ".")
	for _, tc := range []struct{ name, token string }{
		{"expired", sign(signer, claims(func(c *serviceaccount.Claims) { c.Expiry = serviceaccount.NewNumericDate(now.Add(-time.Hour)) }))},
		{"not yet valid", sign(signer, claims(func(c *serviceaccount.Claims) { c.NotBefore = serviceaccount.NewNumericDate(now.Add(time.Hour)) }))},
		{"issued in the future", sign(signer, claims(func(c *serviceaccount.Claims) { c.IssuedAt = serviceaccount.NewNumericDate(now.Add(time.Hour)) }))},
		{"wrong audience", sign(signer, claims(func(c *serviceaccount.Claims) { c.Audience = serviceaccount.Audience{"someone-else"} }))},
		{"wrong issuer", sign(signer, claims(func(c *serviceaccount.Claims) { c.Issuer = "https://evil.example" }))},
		{"signed by another key", sign(other, claims(nil))},
		{"alg none", b64(`{"alg":"none"}`) + "." + parts[1] + "."},
		{"alg none with the signature", b64(`{"alg":"none"}`) + "." + parts[1] + "." + parts[2]},
		{"alg HS256 keyed with the public key", b64(`{"alg":"HS256"}`) + "." + parts[1] + "." + parts[2]},
		{"payload swapped", parts[0] + "." + b64(`{"iss":"`+options.DefaultServiceAccountIssuer+`","sub":"system:serviceaccount:kube-system:admin"}`) + "." + parts[2]},
		{"truncated signature", good[:len(good)-10]},
		{"two parts", parts[0] + "." + parts[1]},
		{"bad base64", parts[0] + ".!!!." + parts[2]},
		{"header not JSON", b64("nope") + "." + parts[1] + "." + parts[2]},
		{"claims not JSON", parts[0] + "." + b64("[") + "." + parts[2]},
		{"garbage", "x.y.z"},
		{"unknown opaque token", "not-a-token"},
		{"wrong service account UID", sign(signer, claims(func(c *serviceaccount.Claims) { c.Kubernetes.Svcacct.UID = "00000000-0000-0000-0000-000000000000" }))},
		{"unknown service account", sign(signer, claims(func(c *serviceaccount.Claims) { c.Kubernetes.Svcacct.Name = "nobody" }))},
		{"no kubernetes.io claim", sign(signer, claims(func(c *serviceaccount.Claims) { c.Kubernetes = nil }))},
		{"legacy token not in a secret", sign(signer, serviceaccount.Claims{Issuer: serviceaccount.LegacyIssuer, Subject: "system:serviceaccount:team:robot",
			LegacyNamespace: "team", LegacySecretName: "gone", LegacyServiceAccountName: "robot", LegacyServiceAccountUID: string(sa.UID)})},
	} {
		unauthorized(t, srv, tc.name, tc.token)
	}

	// Bound objects: the token dies with the object.
	secret, err := admin.CoreV1().Secrets("team").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := admin.CoreV1().Pods("team").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{ServiceAccountName: "robot", NodeName: "n1",
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	request := func(kind, name string, uid types.UID) string {
		t.Helper()
		tr, err := admin.CoreV1().ServiceAccounts("team").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: kind, APIVersion: "v1", Name: name, UID: uid},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("TokenRequest bound to %s %s: %v", kind, name, err)
		}
		return tr.Status.Token
	}
	secretTok, nodeTok, podTok := request("Secret", "anchor", secret.UID), request("Node", "n1", node.UID), request("Pod", "p", pod.UID)
	u, err := whoami(t, srv, podTok)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		serviceaccount.ExtraPodName: "p", serviceaccount.ExtraPodUID: string(pod.UID),
		serviceaccount.ExtraNodeName: "n1", serviceaccount.ExtraNodeUID: string(node.UID),
	} {
		if got := u.Extra[k]; len(got) != 1 || got[0] != want {
			t.Errorf("pod-bound token extra %s: got %q, want %q", k, got, want)
		}
	}
	for _, tok := range []string{secretTok, nodeTok, podTok} {
		if _, err := whoami(t, srv, tok); err != nil {
			t.Fatalf("bound token before deletion: %v", err)
		}
	}
	if err := admin.CoreV1().Secrets("team").Delete(ctx, "anchor", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().Pods("team").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the pod is gone", func() error {
		if _, err := admin.CoreV1().Pods("team").Get(ctx, "p", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("pod still there")
		}
		return nil
	})
	// Cached for up to 10 s, as upstream (the clock has not moved since
	// they authenticated above).
	for _, tok := range []string{secretTok, nodeTok, podTok} {
		if _, err := whoami(t, srv, tok); err != nil {
			t.Errorf("bound token within the cache's TTL after its object's deletion: %v, want authenticated (cached, as upstream)", err)
		}
	}
	expireTokens(clock)
	unauthorized(t, srv, "token of a deleted secret", secretTok)
	unauthorized(t, srv, "token of a deleted node", nodeTok)
	unauthorized(t, srv, "token of a deleted pod", podTok)

	// The service account deleted, then created again: a new UID.
	if _, err := whoami(t, srv, good); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().ServiceAccounts("team").Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked(t, srv, clock, "token of a deleted service account", good)
	if _, err := admin.CoreV1().ServiceAccounts("team").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unauthorized(t, srv, "token of a re-created service account", good)
}

// TestAuthnIssuerDiscovery: /.well-known/openid-configuration and
// /openid/v1/jwks describe the issuer, and the published key verifies the
// tokens the server issues. Until RBAC exists authenticated users may read
// them; anonymous ones may not (upstream grants them to
// system:service-account-issuer-discovery, which holds only service
// accounts by default).
func TestAuthnIssuerDiscovery(t *testing.T) {
	srv := authnServer(t)
	admin := mustClientset(t, srv.Config)
	serviceAccount(t, admin, "team", "robot")
	tr, err := admin.CoreV1().ServiceAccounts("team").CreateToken(context.Background(), "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, body := getWithToken(t, srv, tr.Status.Token, "/.well-known/openid-configuration")
	var cfg struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		Algs          []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.Unmarshal(body, &cfg); err != nil || code != http.StatusOK {
		t.Fatalf("openid-configuration: got %d %s", code, body)
	}
	want := options.DefaultServiceAccountIssuer
	if cfg.Issuer != want || cfg.JWKSURI != want+"/openid/v1/jwks" || strings.Join(cfg.ResponseTypes, ",") != "id_token" ||
		strings.Join(cfg.SubjectTypes, ",") != "public" || strings.Join(cfg.Algs, ",") != "ES256" {
		t.Errorf("openid-configuration: got %+v", cfg)
	}
	code, body = getWithToken(t, srv, "static-token", "/openid/v1/jwks")
	var set struct {
		Keys []struct{ Use, Kty, Kid, Alg, Crv, X, Y string }
	}
	if err := json.Unmarshal(body, &set); err != nil || code != http.StatusOK || len(set.Keys) != 1 {
		t.Fatalf("jwks: got %d %s", code, body)
	}
	k := set.Keys[0]
	if k.Use != "sig" || k.Kty != "EC" || k.Alg != "ES256" || k.Crv != "P-256" {
		t.Errorf("jwk: got %+v", k)
	}
	// Verify the token with the published key, independently of kapi's
	// verifier.
	parts := strings.Split(tr.Status.Token, ".")
	var header struct{ Alg, Kid string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &header); err != nil || header.Kid != k.Kid || header.Alg != "ES256" {
		t.Errorf("token header %s: want kid %s, ES256", hb, k.Kid)
	}
	x, _ := base64.RawURLEncoding.DecodeString(k.X)
	y, _ := base64.RawURLEncoding.DecodeString(k.Y)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Error("the published key does not verify the issued token")
	}
	if code, _ := getWithToken(t, srv, "", "/openid/v1/jwks"); code != http.StatusForbidden {
		t.Errorf("anonymous jwks: got %d, want 403", code)
	}
}

// TestAuthnAnonymous: without credentials a request is system:anonymous
// (the interim authorizer lets it read /healthz, and whoami answers who it
// is); with --anonymous-auth=false it is 401.
func TestAuthnAnonymous(t *testing.T) {
	srv := authnServer(t)
	if code, body := getWithToken(t, srv, "", "/healthz"); code != http.StatusOK {
		t.Errorf("anonymous /healthz: got %d %s", code, body)
	}
	if code, _ := getWithToken(t, srv, "", "/api/v1/namespaces"); code != http.StatusForbidden {
		t.Errorf("anonymous list: got %d, want 403", code)
	}
	off := authnServer(t, "--anonymous-auth=false")
	unauthorized(t, off, "no credentials with --anonymous-auth=false", "")
	if code, _ := getWithToken(t, off, "", "/healthz"); code != http.StatusUnauthorized {
		t.Errorf("/healthz without credentials with --anonymous-auth=false: got %d, want 401", code)
	}
	if u, err := whoami(t, off, "static-token"); err != nil || u.Username != "alice" {
		t.Errorf("static token with --anonymous-auth=false: got %+v, %v", u, err)
	}
}

// TestAuthnAnonymousOffUnderAlwaysAllow: with the AlwaysAllow authorizer
// kube-apiserver turns anonymous requests off (v1.37.2: "AnonymousAuth is
// not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to
// false", pkg/kubeapiserver/options/authentication.go), even with
// --anonymous-auth=true: a request without credentials is 401, as the
// reference answered (session 25), not everything allowed to anyone.
// Credentials still work.
func TestAuthnAnonymousOffUnderAlwaysAllow(t *testing.T) {
	for _, flags := range [][]string{
		{"--authorization-mode=AlwaysAllow"},
		{"--authorization-mode=RBAC,AlwaysAllow", "--anonymous-auth=true"},
	} {
		srv := authnServer(t, flags...)
		unauthorized(t, srv, fmt.Sprintf("no credentials with %q", flags), "")
		if code, _ := getWithToken(t, srv, "", "/healthz"); code != http.StatusUnauthorized {
			t.Errorf("/healthz without credentials with %q: got %d, want 401", flags, code)
		}
		if u, err := whoami(t, srv, "static-token"); err != nil || u.Username != "alice" {
			t.Errorf("static token with %q: got %+v, %v", flags, u, err)
		}
	}
}

// TestAuthnTokenRequestRules: TokenRequest's checks and lifetimes as
// upstream's TokenREST (pkg/registry/core/serviceaccount/storage/token.go,
// v1.37): the 10-minute minimum, --service-account-max-token-expiration
// shortening with a warning, the extension of the kubelet's 3607-second
// pod tokens, and the refused bindings.
func TestAuthnTokenRequestRules(t *testing.T) {
	srv := authnServer(t, "--service-account-max-token-expiration=2h")
	ctx := context.Background()
	warnings := &recordingWarnings{}
	cfg := rest.CopyConfig(srv.Config)
	cfg.WarningHandler = warnings
	admin := mustClientset(t, cfg)
	serviceAccount(t, admin, "team", "robot")
	if _, err := admin.CoreV1().ServiceAccounts("team").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := admin.CoreV1().Pods("team").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{ServiceAccountName: "robot", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(name string, spec authenticationv1.TokenRequestSpec) (*authenticationv1.TokenRequest, error) {
		return admin.CoreV1().ServiceAccounts("team").CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	}
	claimsOf := func(token string) serviceaccount.Claims {
		t.Helper()
		p, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
		var c serviceaccount.Claims
		if err := json.Unmarshal(p, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}

	_, err = create("robot", authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)})
	if st := statusOf(err); st.Code != 422 || !strings.Contains(st.Message, "may not specify a duration less than 10 minutes") {
		t.Errorf("599 seconds: got %v, want 422 with upstream's message", err)
	}
	tr, err := create("robot", authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3 * 3600)})
	if err != nil {
		t.Fatal(err)
	}
	if *tr.Spec.ExpirationSeconds != 7200 || !warnings.has("requested expiration of 10800 seconds shortened to 7200 seconds") {
		t.Errorf("3h with a 2h maximum: got %d seconds, warnings %q", *tr.Spec.ExpirationSeconds, warnings.list())
	}
	if c := claimsOf(tr.Status.Token); c.Expiry.Time().Sub(c.IssuedAt.Time()) != 2*time.Hour {
		t.Errorf("3h with a 2h maximum: token lives %v", c.Expiry.Time().Sub(c.IssuedAt.Time()))
	}
	// The kubelet's pod token: warnafter at the requested time, expiry a
	// year later (--service-account-extend-token-expiration, default on).
	tr, err = create("robot", authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3607),
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	c := claimsOf(tr.Status.Token)
	if c.Kubernetes == nil || c.Kubernetes.WarnAfter == nil || c.Kubernetes.WarnAfter.Time().Sub(c.IssuedAt.Time()) != 3607*time.Second ||
		c.Expiry.Time().Sub(c.IssuedAt.Time()) != 365*24*time.Hour || c.Kubernetes.Pod == nil || c.Kubernetes.Pod.UID != string(pod.UID) {
		t.Errorf("extended pod token claims: got %+v", c.Kubernetes)
	}
	if d := time.Until(tr.Status.ExpirationTimestamp.Time); d > 3607*time.Second {
		t.Errorf("extended pod token: status expiration in %v, want the requested 3607s", d)
	}

	for _, tc := range []struct {
		name string
		sa   string
		spec authenticationv1.TokenRequestSpec
		code int32
		msg  string
	}{
		{"pod of another service account", "other", authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}},
			400, `cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.`},
		{"unknown kind", "robot", authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "x"}},
			400, "cannot bind token to object of type /v1, Kind=ConfigMap"},
		{"stale UID", "robot", authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "stale"}},
			409, "the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated"},
		{"missing pod", "robot", authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "gone"}},
			404, `pods "gone" not found`},
		{"missing service account", "nobody", authenticationv1.TokenRequestSpec{}, 404, `serviceaccounts "nobody" not found`},
	} {
		_, err := create(tc.sa, tc.spec)
		if st := statusOf(err); st.Code != tc.code || !strings.Contains(st.Message, tc.msg) {
			t.Errorf("%s: got %v, want %d %q", tc.name, err, tc.code, tc.msg)
		}
	}
}

// statusOf is the Status of an API error (zero for nil).
func statusOf(err error) metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status()
	}
	return metav1.Status{}
}

// recordingWarnings keeps the warnings a client receives.
type recordingWarnings struct {
	mu  sync.Mutex
	got []string
}

func (w *recordingWarnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *recordingWarnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got)
}

func (w *recordingWarnings) has(text string) bool { return slices.Contains(w.list(), text) }

// TestAuthnLegacyTokenSecrets: the serviceaccount-token-controller fills
// in a kubernetes.io/service-account-token Secret (token, ca.crt,
// namespace, the service account's UID annotation); its token
// authenticates as the service account until the Secret or the service
// account is deleted, and the Secret goes with its service account.
func TestAuthnLegacyTokenSecrets(t *testing.T) {
	srv, clock := authnServerWithClock(t)
	ctx := context.Background()
	admin := mustClientset(t, srv.Config)
	sa := serviceAccount(t, admin, "team", "legacy")
	mk := func(name string) {
		t.Helper()
		_, err := admin.CoreV1().Secrets("team").Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: "legacy"}},
			Type:       corev1.SecretTypeServiceAccountToken,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	filled := func(name string) *corev1.Secret {
		t.Helper()
		var s *corev1.Secret
		eventually(t, 20*time.Second, "the token secret is filled in", func() error {
			var err error
			if s, err = admin.CoreV1().Secrets("team").Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
			if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 {
				return fmt.Errorf("no token yet: %v", s.Data)
			}
			return nil
		})
		return s
	}
	mk("legacy-token")
	s := filled("legacy-token")
	if string(s.Data[corev1.ServiceAccountNamespaceKey]) != "team" || !strings.Contains(string(s.Data[corev1.ServiceAccountRootCAKey]), "BEGIN CERTIFICATE") ||
		s.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Errorf("filled-in secret: data keys %v, annotations %v", mapsKeys(s.Data), s.Annotations)
	}
	token := string(s.Data[corev1.ServiceAccountTokenKey])
	u, err := whoami(t, srv, token)
	if err != nil || u.Username != "system:serviceaccount:team:legacy" || u.UID != string(sa.UID) {
		t.Fatalf("legacy token: got %+v, %v", u, err)
	}
	if err := admin.CoreV1().Secrets("team").Delete(ctx, "legacy-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked(t, srv, clock, "legacy token of a deleted secret", token)

	mk("second")
	token = string(filled("second").Data[corev1.ServiceAccountTokenKey])
	if _, err := whoami(t, srv, token); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().ServiceAccounts("team").Delete(ctx, "legacy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked(t, srv, clock, "legacy token of a deleted service account", token)
	eventually(t, 20*time.Second, "the token secret of the deleted service account is deleted", func() error {
		if _, err := admin.CoreV1().Secrets("team").Get(ctx, "second", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("secret still there (%v)", err)
		}
		return nil
	})
}

func mapsKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// TestAuthnTokenSubresourceDiscovery: serviceaccounts/token is listed as
// upstream lists it: kind authentication.k8s.io/v1 TokenRequest, verb
// create.
func TestAuthnTokenSubresourceDiscovery(t *testing.T) {
	srv := kapitest.Start(t)
	list, err := mustClientset(t, srv.Config).Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.APIResources {
		if r.Name != "serviceaccounts/token" {
			continue
		}
		if r.Group != "authentication.k8s.io" || r.Version != "v1" || r.Kind != "TokenRequest" || !r.Namespaced || strings.Join(r.Verbs, ",") != "create" {
			t.Errorf("serviceaccounts/token: got %+v", r)
		}
		return
	}
	t.Error("serviceaccounts/token is not in the discovery of v1")
}
