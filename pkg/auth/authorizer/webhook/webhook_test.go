package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// fakeService answers reviews: alice is allowed, mallory denied, anyone
// else gets no opinion; user "broken" gets a 500.
type fakeService struct {
	mu     sync.Mutex
	calls  int
	bodies []string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls++
	f.bodies = append(f.bodies, string(body))
	f.mu.Unlock()
	var rev authorizationv1.SubjectAccessReview
	if err := json.Unmarshal(body, &rev); err != nil || r.URL.Path != "/authorize" {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	switch rev.Spec.User {
	case "broken":
		http.Error(w, "down", http.StatusInternalServerError)
		return
	case "alice":
		rev.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "alice may"}
	case "mallory":
		rev.Status = authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "never mallory"}
	}
	_ = json.NewEncoder(w).Encode(&rev)
}

func (f *fakeService) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// writeKubeconfig writes a kubeconfig whose current context reaches
// cluster as a user without credentials, and returns its path.
func writeKubeconfig(t *testing.T, cluster *clientcmdapi.Cluster) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["authz"] = cluster
	cfg.AuthInfos["kapi"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "authz", AuthInfo: "kapi"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func startService(t *testing.T, version string) (*fakeService, *Authorizer) {
	f := &fakeService{}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	path := writeKubeconfig(t, &clientcmdapi.Cluster{Server: srv.URL + "/authorize",
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})})
	a, err := New(Config{KubeconfigFile: path, Version: version, AuthorizedTTL: time.Minute, UnauthorizedTTL: time.Second,
		Retries: 2, RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f, a
}

func TestWebhook(t *testing.T) {
	f, a := startService(t, "")
	ctx := context.Background()
	attrs := func(name string) authorizer.Attributes {
		return authorizer.Attributes{User: &user.Info{Name: name, Groups: []string{"g"}}, Verb: "get", ResourceRequest: true,
			Resource: "pods", Namespace: "ns", APIVersion: "v1"}
	}
	for _, c := range []struct {
		user   string
		want   authorizer.Decision
		reason string
	}{
		{"alice", authorizer.DecisionAllow, "alice may"},
		{"mallory", authorizer.DecisionDeny, "never mallory"},
		{"bob", authorizer.DecisionNoOpinion, ""},
	} {
		d, reason, err := a.Authorize(ctx, attrs(c.user))
		if d != c.want || reason != c.reason || err != nil {
			t.Errorf("%s: got (%v, %q, %v), want (%v, %q)", c.user, d, reason, err, c.want, c.reason)
		}
	}
	if !strings.Contains(f.bodies[0], `"apiVersion":"authorization.k8s.io/v1"`) || !strings.Contains(f.bodies[0], `"groups":["g"]`) ||
		!strings.Contains(f.bodies[0], `"resourceAttributes":{"namespace":"ns","verb":"get","version":"v1","resource":"pods"}`) {
		t.Errorf("sent %s", f.bodies[0])
	}

	// Cached: allowed for a minute, the others for a second.
	calls := f.count()
	for _, u := range []string{"alice", "mallory", "bob"} {
		if _, _, err := a.Authorize(ctx, attrs(u)); err != nil {
			t.Fatal(err)
		}
	}
	if f.count() != calls {
		t.Errorf("got %d more calls, want answers from the cache", f.count()-calls)
	}
	a.now = func() time.Time { return time.Now().Add(2 * time.Second) }
	for _, u := range []string{"alice", "bob"} {
		if _, _, err := a.Authorize(ctx, attrs(u)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.count() - calls; got != 1 {
		t.Errorf("after 2s: got %d calls, want 1 (bob's expired, alice's not)", got)
	}

	// Failures are retried, then no opinion with the error.
	calls = f.count()
	d, _, err := a.Authorize(ctx, attrs("broken"))
	if d != authorizer.DecisionNoOpinion || err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("broken: got %v %v", d, err)
	}
	if got := f.count() - calls; got != 3 {
		t.Errorf("broken: %d calls, want 3 (two retries)", got)
	}
}

func TestWebhookV1beta1(t *testing.T) {
	f, a := startService(t, "v1beta1")
	if d, _, err := a.Authorize(context.Background(), authorizer.Attributes{User: &user.Info{Name: "alice", Groups: []string{"g"}}, Verb: "get", Path: "/healthz"}); d != authorizer.DecisionAllow || err != nil {
		t.Errorf("got %v %v", d, err)
	}
	if !strings.Contains(f.bodies[0], `"apiVersion":"authorization.k8s.io/v1beta1"`) || !strings.Contains(f.bodies[0], `"group":["g"]`) ||
		!strings.Contains(f.bodies[0], `"nonResourceAttributes":{"path":"/healthz","verb":"get"}`) {
		t.Errorf("sent %s", f.bodies[0])
	}
	if _, err := New(Config{KubeconfigFile: "x", Version: "v2"}); err == nil {
		t.Error("version v2 accepted")
	}
}

func TestWebhookMatchConditionsAndFailurePolicy(t *testing.T) {
	f, base := startService(t, "")
	c := base.cfg
	c.MatchConditions = []string{`has(request.resourceAttributes)`, `request.resourceAttributes.namespace != "kube-system"`}
	c.FailurePolicyDeny = true
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	alice := &user.Info{Name: "alice"}
	ctx := context.Background()
	res := func(ns string) authorizer.Attributes {
		return authorizer.Attributes{User: alice, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: ns}
	}
	if d, _, err := a.Authorize(ctx, res("ns")); d != authorizer.DecisionAllow || err != nil {
		t.Errorf("matching: got %v %v, want allow", d, err)
	}
	calls := f.count()
	if d, _, err := a.Authorize(ctx, res("kube-system")); d != authorizer.DecisionNoOpinion || err != nil {
		t.Errorf("kube-system: got %v %v, want no opinion", d, err)
	}
	if d, _, err := a.Authorize(ctx, authorizer.Attributes{User: alice, Verb: "get", Path: "/healthz"}); d != authorizer.DecisionNoOpinion || err != nil {
		t.Errorf("non-resource: got %v %v, want no opinion", d, err)
	}
	if f.count() != calls {
		t.Errorf("the webhook was called for requests its conditions exclude")
	}
	if d, _, err := a.Authorize(ctx, authorizer.Attributes{User: &user.Info{Name: "broken"}, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "ns"}); d != authorizer.DecisionDeny || err == nil {
		t.Errorf("failure with policy Deny: got %v %v", d, err)
	}
	c.MatchConditions = []string{`request.user +`}
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "matchConditions[0].expression: compilation failed") {
		t.Errorf("bad expression: %v", err)
	}
	c.MatchConditions = []string{`"x"`}
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "must evaluate to bool") {
		t.Errorf("non-bool expression: %v", err)
	}
}
