package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

// reloadInterval is how often the test servers check their config files
// (kube-apiserver checks every minute; kapitest's seam shortens it).
const reloadInterval = 100 * time.Millisecond

// metricValue returns the value of the sample of name whose labels
// contain every one of labels (`status="success"`), or "" if none.
func metricValue(t *testing.T, srv *kapitest.Server, name string, labels ...string) string {
	t.Helper()
	body, err := kubernetes.NewForConfigOrDie(srv.Config).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if ok {
			return line[strings.LastIndex(line, " ")+1:]
		}
	}
	return ""
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 20*time.Second, 50*time.Millisecond, what, cond)
}

func writeConfig(t *testing.T, path, content string) {
	t.Helper()
	// Write aside and rename, as configuration management does, so the
	// server never reads a half-written file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func hashOf(s string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s))) }

// TestAuthorizationConfigReload: an --authorization-config file rewritten
// while the server serves takes effect; an invalid rewrite is refused and
// the last good chain stays; the reload metrics say so.
func TestAuthorizationConfigReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authz.yaml")
	const rbacOnly = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n"
	const allowAll = rbacOnly + "- type: AlwaysAllow\n  name: everyone\n"
	writeConfig(t, path, rbacOnly)
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-config="+path),
		kapitest.WithOptions(func(o *kapitest.Options) { o.ConfigReloadInterval = reloadInterval }))
	bobCfg, err := srv.AddUser(kapitest.User{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	bob := kubernetes.NewForConfigOrDie(bobCfg)
	ctx := t.Context()
	listNamespaces := func() error {
		_, err := bob.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return err
	}
	if err := listNamespaces(); !apierrors.IsForbidden(err) {
		t.Fatalf("bob under RBAC only: %v, want Forbidden", err)
	}
	if got := metricValue(t, srv, "apiserver_authorization_config_controller_last_config_info", `hash="`+hashOf(rbacOnly)+`"`); got != "1" {
		t.Errorf("last_config_info of the initial file: %q", got)
	}

	writeConfig(t, path, allowAll)
	waitUntil(t, "the AlwaysAllow authorizer to be in force", func() bool { return listNamespaces() == nil })
	if got := metricValue(t, srv, "apiserver_authorization_config_controller_automatic_reloads_total", `status="success"`, `apiserver_id_hash="sha256:`); got != "1" {
		t.Errorf("successful reloads: %q, want 1", got)
	}
	if got := metricValue(t, srv, "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds", `status="success"`); got == "" {
		t.Error("no last success timestamp")
	}

	// Invalid: an unknown type. Refused; bob keeps his access.
	writeConfig(t, path, "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Magic\n  name: m\n")
	waitUntil(t, "the failed reload to be counted", func() bool {
		return metricValue(t, srv, "apiserver_authorization_config_controller_automatic_reloads_total", `status="failure"`) == "1"
	})
	if err := listNamespaces(); err != nil {
		t.Errorf("after an invalid rewrite the last good chain must stay: %v", err)
	}
	if got := metricValue(t, srv, "apiserver_authorization_config_controller_last_config_info", `hash="`+hashOf(allowAll)+`"`); got != "1" {
		t.Errorf("last_config_info must name the configuration in force: %q", got)
	}

	// Back to RBAC only: bob loses access again.
	writeConfig(t, path, rbacOnly)
	waitUntil(t, "RBAC alone to be in force again", func() bool { return apierrors.IsForbidden(listNamespaces()) })
}

// TestAuthenticationConfigReload: a changed --authentication-config
// takes effect for the next authentication of a token (a new username
// mapping): as kube-apiserver's, a token authenticated within the token
// cache's 10 s keeps its cached user until then (the test moves the
// cache's clock); an invalid rewrite keeps the last good authenticators.
func TestAuthenticationConfigReload(t *testing.T) {
	iss := newOIDCIssuer(t)
	ca, err := os.ReadFile(iss.caFile)
	if err != nil {
		t.Fatal(err)
	}
	indented := "        " + strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", "\n        ")
	config := func(prefix string) string {
		return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
  - issuer:
      url: ` + iss.srv.URL + `
      audiences: [kapi]
      certificateAuthority: |
` + indented + `
    claimMappings:
      username:
        expression: '"` + prefix + `" + claims.sub'
`
	}
	path := filepath.Join(t.TempDir(), "authn.yaml")
	writeConfig(t, path, config("v1:"))
	clock := clocktesting.NewFakeClock(time.Now())
	srv := kapitest.Start(t, kapitest.WithFlags("--authentication-config="+path),
		kapitest.WithOptions(func(o *kapitest.Options) {
			o.ConfigReloadInterval = reloadInterval
			o.TokenCacheNow = clock.Now
		}))
	token := iss.token(t, nil, map[string]any{"sub": "bob", "aud": []string{"kapi"}})
	name := func() string {
		u, err := whoami(t, srv, token)
		if err != nil {
			return "error: " + err.Error()
		}
		return u.Username
	}
	if got := name(); got != "v1:bob" {
		t.Fatalf("initial mapping: %q, want v1:bob", got)
	}
	writeConfig(t, path, config("v2:"))
	waitUntil(t, "the reload", func() bool {
		return metricValue(t, srv, "apiserver_authentication_config_controller_automatic_reloads_total", `status="success"`) == "1"
	})
	if got := name(); got != "v1:bob" {
		t.Errorf("after the reload, within the token cache's TTL: %q, want the cached v1:bob", got)
	}
	expireTokens(clock)
	if got := name(); got != "v2:bob" {
		t.Errorf("after the reload and the TTL: %q, want v2:bob", got)
	}
	// A CEL expression that does not compile: refused.
	writeConfig(t, path, config(`" + + "`))
	waitUntil(t, "the failed reload to be counted", func() bool {
		return metricValue(t, srv, "apiserver_authentication_config_controller_automatic_reloads_total", `status="failure"`) == "1"
	})
	expireTokens(clock)
	if got := name(); got != "v2:bob" {
		t.Errorf("after an invalid rewrite: %q, want v2:bob (the last good configuration)", got)
	}
	if got := metricValue(t, srv, "apiserver_authentication_config_controller_last_config_info", `hash="`+hashOf(config("v2:"))+`"`); got != "1" {
		t.Errorf("last_config_info must name the configuration in force: %q", got)
	}
}

// TestAuthorizationConfigNodeReload: type Node in --authorization-config
// (kubeadm's Node,RBAC chain in the structured form); a reload may drop
// and restore it.
func TestAuthorizationConfigNodeReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authz.yaml")
	const head = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n"
	const nodeRBAC = head + "- type: Node\n  name: node\n- type: RBAC\n  name: rbac\n"
	const rbacOnly = head + "- type: RBAC\n  name: rbac\n"
	writeConfig(t, path, nodeRBAC)
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-config="+path),
		kapitest.WithOptions(func(o *kapitest.Options) { o.ConfigReloadInterval = reloadInterval }))
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	for _, n := range []string{"n1", "n2"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := srv.AddUser(kapitest.User{Name: "system:node:n1", Groups: []string{"system:nodes"}})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := kubernetes.NewForConfigOrDie(cfg)
	getNode := func(name string) error {
		_, err := kubelet.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err
	}
	if err := getNode("n1"); err != nil {
		t.Fatalf("n1 reads itself under Node,RBAC: %v", err)
	}
	err = getNode("n2")
	if want := `nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object`; err == nil || err.Error() != want {
		t.Errorf("n1 reads n2: %v, want %s", err, want)
	}
	writeConfig(t, path, rbacOnly)
	waitUntil(t, "Node to be dropped", func() bool { return apierrors.IsForbidden(getNode("n1")) })
	writeConfig(t, path, nodeRBAC)
	waitUntil(t, "Node to be back", func() bool { return getNode("n1") == nil })
}
