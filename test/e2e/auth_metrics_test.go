package e2e

import (
	"context"
	"crypto/tls"
	"net/http"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestAuthMetrics checks the authentication, authorization and
// impersonation metrics against kube-apiserver v1.37.2's (names and labels:
// k8s.io/apiserver pkg/endpoints/filters/metrics.go and
// filters/impersonation/metrics; the counts of the same request sequence
// were read from a reference kube-apiserver v1.37.2's /metrics, session
// 17: an unknown bearer token counts as an error, a user name with "@" as
// email_id, RBAC's no opinion as no-opinion, and an impersonation of a
// plain user by a system:masters member as mode user-info, whose
// authorization checks are cached: 2 for the first request, 0 for the same
// request again, 1 for another verb). Only series no other traffic of the
// server feeds are compared exactly.
func TestAuthMetrics(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	value := func(name string, labels ...string) int {
		t.Helper()
		v := metricValue(t, srv, name, labels...)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s %v: value %q", name, labels, v)
		}
		return n
	}

	// Two requests with a token nobody issued.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.Config.Host+"/api", nil)
		req.Header.Set("Authorization", "Bearer no-such-token")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad token: %d, want 401", resp.StatusCode)
		}
	}
	if got := value("authentication_attempts", `result="error"`); got != 2 {
		t.Errorf(`authentication_attempts{result="error"} = %d, want 2`, got)
	}

	// A user named like an e-mail address: one allowed discovery read,
	// two reads RBAC has no opinion on (403).
	aliceCfg, err := srv.AddUser(kapitest.User{Name: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	alice := kubernetes.NewForConfigOrDie(aliceCfg)
	if _, err := alice.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := alice.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); err == nil {
			t.Fatal("alice read a pod")
		}
	}
	if got := value("authenticated_user_requests", `username="email_id"`); got != 3 {
		t.Errorf(`authenticated_user_requests{username="email_id"} = %d, want 3`, got)
	}
	if got := value("authorization_attempts_total", `result="no-opinion"`); got != 2 {
		t.Errorf(`authorization_attempts_total{result="no-opinion"} = %d, want 2`, got)
	}
	if got := value("authentication_attempts", `result="success"`); got < 3 {
		t.Errorf(`authentication_attempts{result="success"} = %d, want at least 3`, got)
	}
	if got := value("authorization_attempts_total", `result="allowed"`); got < 1 {
		t.Errorf(`authorization_attempts_total{result="allowed"} = %d, want at least 1`, got)
	}

	// The admin impersonating dave: get, the same get, a list.
	impCfg := rest.CopyConfig(srv.Config)
	impCfg.Impersonate = rest.ImpersonationConfig{UserName: "dave"}
	dave := kubernetes.NewForConfigOrDie(impCfg)
	attempts := func() int {
		return value("apiserver_impersonation_attempts_total", `mode="user-info"`, `decision="allowed"`)
	}
	checks := func() int {
		return value("apiserver_impersonation_authorization_attempts_total", `mode="user-info"`, `decision="allowed"`)
	}
	steps := []struct {
		do     func() error
		checks int
	}{
		{func() error {
			_, err := dave.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
			return err
		}, 2},
		{func() error {
			_, err := dave.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
			return err
		}, 0},
		{func() error { _, err := dave.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); return err }, 1},
	}
	for i, s := range steps {
		a0, c0 := attempts(), checks()
		// dave may not read namespaces: the impersonation is allowed and
		// counted before authorization refuses the request.
		if err := s.do(); !apierrors.IsForbidden(err) {
			t.Fatalf("impersonated request %d: %v, want 403 (dave has no role)", i+1, err)
		}
		if a, c := attempts()-a0, checks()-c0; a != 1 || c != s.checks {
			t.Errorf("impersonated request %d: +%d attempts and +%d authorization checks, want +1 and +%d", i+1, a, c, s.checks)
		}
	}
}

// TestVersionAndRuntimeMetrics: the metrics every Kubernetes component
// serves (k8s.io/component-base v0.37 legacyregistry: the Go collector
// with all runtime/metrics, kubernetes_build_info, version_info; labels
// as a reference kube-apiserver v1.37.2 serves them:
// version_info{binary="1.37.2",component="kube",emulation="1.37",min_compat="1.36"}).
func TestVersionAndRuntimeMetrics(t *testing.T) {
	srv := kapitest.Start(t)
	if got := metricValue(t, srv, "version_info", `binary="1.37.2"`, `component="kube"`, `emulation="1.37"`, `min_compat="1.36"`); got != "1" {
		t.Errorf("version_info: %q, want 1", got)
	}
	info, err := kubernetes.NewForConfigOrDie(srv.Config).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got := metricValue(t, srv, "kubernetes_build_info", `git_version="`+info.GitVersion+`"`, `major="1"`, `minor="37"`, `platform="`+info.Platform+`"`); got != "1" {
		t.Errorf("kubernetes_build_info with git_version %s: %q, want 1", info.GitVersion, got)
	}
	// Families only the runtime/metrics collector has.
	body, err := kubernetes.NewForConfigOrDie(srv.Config).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range []string{"go_gc_heap_goal_bytes", "go_sched_goroutines_goroutines", "go_memory_classes_total_bytes", "go_gc_pauses_seconds"} {
		if !strings.Contains(string(body), "\n# TYPE "+family+" ") {
			t.Errorf("/metrics has no %s", family)
		}
	}

	// A server reporting another version says so in both.
	old := kapitest.Start(t, kapitest.WithKubernetesVersion("v1.31.4"))
	if got := metricValue(t, old, "version_info", `emulation="1.31"`); got != "1" {
		t.Errorf("version_info of a v1.31.4 server: %q, want emulation 1.31", got)
	}
	if got := metricValue(t, old, "kubernetes_build_info", `git_version="v1.31.4"`); got != "1" {
		t.Errorf("kubernetes_build_info of a v1.31.4 server: %q, want git_version v1.31.4", got)
	}
}
