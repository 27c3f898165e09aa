package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/server/options"
)

// authnServer starts a server with a --token-auth-file holding one user,
// "static-token" -> alice (uid 1001) in groups dev and ops.
func authnServer(t *testing.T, flags ...string) *kapitest.Server {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("static-token,alice,1001,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return kapitest.Start(t, kapitest.WithFlags(append([]string{"--token-auth-file=" + tokens}, flags...)...))
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
