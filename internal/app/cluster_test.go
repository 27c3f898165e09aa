package app_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/testports"
	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/server/options"
)

// clusterServer is one kapi process of an embedded etcd cluster: the test
// binary re-executed as the kapi command (KAPI_TEST_RUN_COMMAND).
type clusterServer struct {
	t    *testing.T
	name string
	dir  string
	port int
	args []string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	tail bytes.Buffer
}

func newClusterServer(t *testing.T, base, name string) *clusterServer {
	s := &clusterServer{t: t, name: name, dir: filepath.Join(base, name)}
	t.Cleanup(s.kill)
	return s
}

// pickPorts reserves the server's ports (testports.Reserve) at its first
// start, for the test's whole run: the process binds them with
// SO_REUSEPORT (--permit-port-sharing, --etcd-socket-reuse-port), so no
// test package running alongside can take one, neither before the first
// start nor between a kill and a restart, which reuses them.
func (s *clusterServer) pickPorts() {
	if s.port != 0 {
		return
	}
	s.port = testports.Reserve(s.t)
	s.args = []string{
		"--data-dir=" + s.dir, "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.port),
		"--etcd-peer-address=127.0.0.1:" + strconv.Itoa(testports.Reserve(s.t)),
		"--etcd-client-address=127.0.0.1:" + strconv.Itoa(testports.Reserve(s.t)),
		"--permit-port-sharing", "--etcd-socket-reuse-port",
		"--etcd-member-name=" + s.name,
		// A killed leader's Lease is taken over within seconds.
		"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
	}
}

func (s *clusterServer) url() string {
	if s.port == 0 {
		s.t.Fatalf("%s: url before its first start", s.name)
	}
	return "https://127.0.0.1:" + strconv.Itoa(s.port)
}

func (s *clusterServer) start(extra ...string) {
	s.t.Helper()
	s.pickPorts()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAPI_TEST_RUN_COMMAND="+strings.Join(append(append([]string{}, s.args...), extra...), " "))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	done := s.done
	s.mu.Lock()
	s.tail.Reset()
	s.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.tail.WriteString(sc.Text() + "\n")
			if s.tail.Len() > 64<<10 {
				s.tail.Next(s.tail.Len() - 32<<10)
			}
			s.mu.Unlock()
		}
		_ = cmd.Wait()
		close(done)
	}()
}

// kill sends SIGKILL to the process this test started and waits for it.
func (s *clusterServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

func (s *clusterServer) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tail.String()
}

// ready waits for /readyz through the admin kubeconfig the process wrote
// and returns a client of it.
func (s *clusterServer) ready() (*rest.Config, kubernetes.Interface) {
	s.t.Helper()
	deadline := time.Now().Add(75 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.t.Fatalf("%s exited before ready:\n%s", s.name, s.log())
		default:
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.dir, "admin.kubeconfig"))
		if err == nil && cfg.Host == s.url() {
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				s.t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			cancel()
			if err == nil && string(body) == "ok" {
				return cfg, cs
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("%s not ready:\n%s", s.name, s.log())
	return nil, nil
}

// runKapi runs the kapi command in this process and returns its output.
func runKapi(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := app.NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

var leaderMetric = regexp.MustCompile(`(?m)^leader_election_master_status\{name="[^"]+"\} 1$`)

func isLeader(cs kubernetes.Interface) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	return err == nil && leaderMetric.Match(body)
}

func eventually(t *testing.T, d time.Duration, what string, fn func() error) {
	t.Helper()
	testwait.For(t, d, 250*time.Millisecond, what, fn)
}

func expectAdded(t *testing.T, w watch.Interface, name, through string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch through %s closed before %s was added", through, name)
			}
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added && cm.Name == name {
				return
			}
		case <-timeout:
			t.Fatalf("watch through %s: no ADDED event for %s", through, name)
		}
	}
}

// TestEmbeddedClusterThreeServers (issue 20): three kapi processes form one
// etcd cluster with --cluster-init and --join on loopback; a write through
// one is read and watched through the others, and any server verifies the
// others' certificates and service-account tokens (shared PKI); with the
// first killed (-9) the others keep serving and one of them leads the
// controllers; restarted, the first rejoins and serves the data written
// meanwhile; a member is removed and replaced by a fresh server; with two
// of three killed, the last one's readyz names etcd and writes answer 504.
func TestEmbeddedClusterThreeServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five kapi processes")
	}
	// Mostly waiting (etcd's reconfiguration checks, outages): run beside
	// the package's other waiting tests.
	t.Parallel()
	ctx := t.Context()
	base := t.TempDir()
	s := []*clusterServer{newClusterServer(t, base, "s0"), newClusterServer(t, base, "s1"), newClusterServer(t, base, "s2")}

	began := time.Now()
	s[0].start("--cluster-init")
	_, c0 := s[0].ready()
	t.Logf("measured: the first server was ready %v after its start", time.Since(began).Round(time.Millisecond))
	tokenPath := filepath.Join(s[0].dir, "join-token")
	fi, err := os.Stat(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("join token mode %v, want 0600", fi.Mode().Perm())
	}
	raw, err := os.ReadFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	if _, err := options.ParseJoinToken(token); err != nil {
		t.Fatalf("join token %q: %v", token, err)
	}
	if !strings.Contains(s[0].log(), tokenPath) {
		t.Errorf("the first server did not log where the join token is:\n%s", s[0].log())
	}

	// The join endpoint refuses a wrong token and a bad request with a
	// Status, before anything reaches etcd.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, tc := range []struct {
		token, body string
		code        int
	}{
		{"K10" + strings.Repeat("0", 64) + "::server:" + strings.Repeat("x", 64), `{}`, http.StatusUnauthorized},
		{"", `{}`, http.StatusUnauthorized},
		{token, `{"name":"x","peerURL":"http://127.0.0.1:1","clientURL":"https://127.0.0.1:2"}`, http.StatusBadRequest},
		{token, `not json`, http.StatusBadRequest},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s[0].url()+"/kapi/cluster/join", strings.NewReader(tc.body))
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := insecure.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), `"kind":"Status"`) {
			t.Errorf("join with token %.8q body %q: %d %s, want %d and a Status", tc.token, tc.body, resp.StatusCode, body, tc.code)
		}
	}
	// A server that is not of this cluster (wrong CA hash) is refused by
	// the joining side before the secret is sent.
	other := newClusterServer(t, base, "stranger")
	other.start("--join="+s[0].url(), "--token=K10"+strings.Repeat("ab", 32)+token[3+64:])
	select {
	case <-other.done:
		if !strings.Contains(other.log(), "does not match the CA hash in the join token") {
			t.Errorf("join with a token of another CA:\n%s", other.log())
		}
		other.cmd = nil
	case <-time.After(60 * time.Second):
		t.Fatalf("join with a token of another CA did not fail:\n%s", other.log())
	}

	began = time.Now()
	s[1].start("--join="+s[0].url(), "--token="+token)
	_, c1 := s[1].ready()
	t.Logf("measured: the second server joined and was ready in %v", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	s[2].start("--join="+s[0].url(), "--token="+token)
	cfg2, c2 := s[2].ready()
	t.Logf("measured: the third server joined and was ready in %v", time.Since(began).Round(time.Millisecond))

	out, err := runKapi(t, "etcd", "member", "list", "--data-dir="+s[2].dir)
	if err != nil {
		t.Fatalf("member list: %v\n%s", err, out)
	}
	for _, name := range []string{"s0", "s1", "s2"} {
		if !regexp.MustCompile(`(?m)^[0-9a-f]+\s+` + name + `\s+started\s`).MatchString(out) {
			t.Errorf("member list lacks started member %s:\n%s", name, out)
		}
	}

	// A write through one server is read and watched through the others.
	watches := map[string]watch.Interface{}
	for name, cs := range map[string]kubernetes.Interface{"s1": c1, "s2": c2} {
		list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches[name] = w
	}
	if _, err := c0.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "through-s0"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, w := range watches {
		expectAdded(t, w, "through-s0", name)
	}
	got, err := c2.CoreV1().ConfigMaps("default").Get(ctx, "through-s0", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("read through s2: %v %v", got, err)
	}

	// Shared PKI: s0's admin certificate is accepted by s2, and a
	// service-account token s0 issued authenticates on s2.
	cfg0on2 := rest.CopyConfig(cfg2)
	adm0, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s[0].dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg0on2.TLSClientConfig = adm0.TLSClientConfig
	cross, err := kubernetes.NewForConfig(cfg0on2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cross.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("s0's admin certificate on s2: %v", err)
	}
	if _, err := c0.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "cluster-test"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := c0.CoreV1().ServiceAccounts("default").CreateToken(ctx, "cluster-test", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saCfg := rest.AnonymousClientConfig(cfg2)
	saCfg.BearerToken = tr.Status.Token
	saClient, err := kubernetes.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	ssr, err := saClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || ssr.Status.UserInfo.Username != "system:serviceaccount:default:cluster-test" {
		t.Errorf("s0's service-account token on s2: %v %v", ssr, err)
	}

	// One server leads the controllers.
	eventually(t, 30*time.Second, "one leader among three", func() error {
		n := 0
		for _, cs := range []kubernetes.Interface{c0, c1, c2} {
			if isLeader(cs) {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%d leaders", n)
		}
		return nil
	})

	// kill -9 the first: the others keep serving and one of them leads.
	s[0].kill()
	killed := time.Now()
	eventually(t, 30*time.Second, "write through s1 with s0 killed", func() error {
		_, err := c1.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "while-s0-down"}}, metav1.CreateOptions{})
		return err
	})
	t.Logf("measured: the first write through s1 after s0's kill -9 succeeded %v after the kill", time.Since(killed).Round(time.Millisecond))
	expectAdded(t, watches["s2"], "while-s0-down", "s2")
	eventually(t, 30*time.Second, "a leader among the survivors", func() error {
		if !isLeader(c1) && !isLeader(c2) {
			return fmt.Errorf("neither s1 nor s2 leads")
		}
		lease, err := c2.CoordinationV1().Leases("kube-system").Get(ctx, options.DefaultLeaderElectionName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(killed) || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("lease not renewed since the kill: %+v", lease.Spec)
		}
		return nil
	})
	t.Logf("measured: a survivor led the controllers with a renewed Lease %v after the kill", time.Since(killed).Round(time.Millisecond))

	// Restarted on its data dir, the first rejoins and serves the data
	// written while it was down.
	began = time.Now()
	s[0].start("--cluster-init")
	_, c0 = s[0].ready()
	t.Logf("measured: the restarted first server rejoined and was ready in %v", time.Since(began).Round(time.Millisecond))
	eventually(t, 15*time.Second, "read through the restarted s0", func() error {
		_, err := c0.CoreV1().ConfigMaps("default").Get(ctx, "while-s0-down", metav1.GetOptions{})
		return err
	})

	// Replace s2: remove its member, stop it, join a fresh server.
	out, err = runKapi(t, "etcd", "member", "remove", "s2", "--data-dir="+s[1].dir)
	if err != nil {
		t.Fatalf("member remove: %v\n%s", err, out)
	}
	removed := time.Now()
	s[2].kill()
	s3 := newClusterServer(t, base, "s3")
	s3.start("--join="+s[1].url(), "--token="+token)
	_, c3 := s3.ready()
	t.Logf("measured: the replacement joined and was ready %v after the removal", time.Since(removed).Round(time.Millisecond))
	if _, err := c3.CoreV1().ConfigMaps("default").Get(ctx, "while-s0-down", metav1.GetOptions{}); err != nil {
		t.Errorf("read through the replacement: %v", err)
	}
	out, err = runKapi(t, "etcd", "member", "list", "--data-dir="+s[0].dir)
	if err != nil {
		t.Fatalf("member list: %v\n%s", err, out)
	}
	if strings.Contains(out, " s2 ") || strings.Count(out, " started ") != 3 || !strings.Contains(out, " s3 ") {
		t.Errorf("member list after the replacement:\n%s", out)
	}

	// Quorum lost: with two of three killed, the survivor's /readyz names
	// the etcd check and a write answers 504 within its timeout.
	s[1].kill()
	s3.kill()
	down := time.Now()
	eventually(t, 20*time.Second, "readyz without quorum", func() error {
		var code int
		res := c0.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "").Do(ctx).StatusCode(&code)
		body, _ := res.Raw()
		if code != http.StatusInternalServerError || !strings.Contains(string(body), "[-]etcd failed") {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	t.Logf("measured: without quorum, readyz failed naming etcd %v after the kills", time.Since(down).Round(time.Millisecond))
	start := time.Now()
	err = c0.CoreV1().RESTClient().Post().Namespace("default").Resource("configmaps").Param("timeout", "3s").
		Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "without-quorum"}}).Do(ctx).Error()
	took := time.Since(start)
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusGatewayTimeout || took > 5*time.Second {
		t.Errorf("create without quorum: %v after %v, want 504 within the 3s timeout", err, took)
	}
	t.Logf("measured: a create without quorum answered %v after %v", err, took.Round(time.Millisecond))
}
