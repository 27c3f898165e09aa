package app_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/testports"
)

// Issue 20 point 1: kapi on a three-member external etcd cluster that
// requires client certificates (--etcd-cafile/certfile/keyfile). Each
// member runs in a child process of the test binary (KAPI_TEST_ETCD_MEMBER),
// so "kill" is a real SIGKILL: no leadership transfer, no graceful close of
// the gRPC streams kapi has open to it.

// etcdMemberSpec is what a member child process is told.
type etcdMemberSpec struct {
	Name           string `json:"name"`
	Dir            string `json:"dir"`
	ClientURL      string `json:"clientURL"`
	PeerURL        string `json:"peerURL"`
	InitialCluster string `json:"initialCluster"`
	// CertFile, KeyFile and CAFile: clients must present a certificate
	// signed by CAFile (mutual TLS), as --etcd-cafile/certfile/keyfile
	// expect.
	CertFile string `json:"certFile"`
	KeyFile  string `json:"keyFile"`
	CAFile   string `json:"caFile"`
}

// etcdMemberChild runs one etcd member until it is killed.
func etcdMemberChild(spec string) {
	var s etcdMemberSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg := embed.NewConfig()
	cfg.Name = s.Name
	cfg.Dir = s.Dir
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true
	// Its ports are reserved by the test process (testports.Reserve).
	cfg.SocketOpts.ReusePort = true
	// etcd's defaults (100 ms heartbeat, 1 s election): shorter timeouts
	// cause spurious elections on a loaded test machine.
	cu, err := url.Parse(s.ClientURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	pu, err := url.Parse(s.PeerURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = s.InitialCluster
	cfg.InitialClusterToken = "kapi-test-cluster"
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: s.CertFile, KeyFile: s.KeyFile, TrustedCAFile: s.CAFile, ClientCertAuth: true}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start etcd member:", err)
		os.Exit(1)
	}
	err = <-e.Err()
	fmt.Fprintln(os.Stderr, "etcd member:", err)
	os.Exit(1)
}

// etcdMember is one member child process, restartable on its ports and data.
type etcdMember struct {
	t    *testing.T
	spec etcdMemberSpec
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	tail strings.Builder
}

type etcdCluster struct {
	t       *testing.T
	members []*etcdMember
	// caFile, certFile and keyFile are a client's (kapi's) credentials.
	caFile, certFile, keyFile string
	clientTLS                 *tls.Config
}

func startEtcdCluster(t *testing.T, n int) *etcdCluster {
	t.Helper()
	base := t.TempDir()
	serverTLS, caFile, certFile, keyFile := etcdPKI(t)
	clientTLS, err := serverTLSClient(caFile, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	c := &etcdCluster{t: t, caFile: caFile, certFile: certFile, keyFile: keyFile, clientTLS: clientTLS}
	var initial []string
	for i := range n {
		// The ports are reserved for the test's run: the member binds
		// them with SO_REUSEPORT, at its start and its restarts.
		m := &etcdMember{t: t, spec: etcdMemberSpec{
			Name:      "m" + strconv.Itoa(i),
			Dir:       filepath.Join(base, "m"+strconv.Itoa(i)),
			ClientURL: "https://127.0.0.1:" + strconv.Itoa(testports.Reserve(t)),
			PeerURL:   "http://127.0.0.1:" + strconv.Itoa(testports.Reserve(t)),
			CertFile:  serverTLS.CertFile,
			KeyFile:   serverTLS.KeyFile,
			CAFile:    serverTLS.TrustedCAFile,
		}}
		initial = append(initial, m.spec.Name+"="+m.spec.PeerURL)
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.spec.InitialCluster = strings.Join(initial, ",")
		m.start()
		t.Cleanup(m.kill)
	}
	c.waitHealthy(c.members...)
	return c
}

func (m *etcdMember) start() {
	m.t.Helper()
	spec, err := json.Marshal(m.spec)
	if err != nil {
		m.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAPI_TEST_ETCD_MEMBER="+string(spec))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.cmd, m.done = cmd, make(chan struct{})
	done := m.done
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			m.mu.Lock()
			m.tail.WriteString(s.Text() + "\n")
			m.mu.Unlock()
		}
		_ = cmd.Wait()
		close(done)
	}()
}

// kill sends SIGKILL to the member's process (the one this test started)
// and waits for it to exit.
func (m *etcdMember) kill() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	<-m.done
	m.cmd = nil
}

func (c *etcdCluster) urls() []string {
	var u []string
	for _, m := range c.members {
		u = append(u, m.spec.ClientURL)
	}
	return u
}

// waitHealthy waits until each member answers a linearizable read itself
// (it is up and part of a cluster with a leader).
func (c *etcdCluster) waitHealthy(ms ...*etcdMember) {
	c.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for _, m := range ms {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.spec.ClientURL}, TLS: c.clientTLS, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			c.t.Fatal(err)
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := cli.Get(ctx, "/health")
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				m.mu.Lock()
				tail := m.tail.String()
				m.mu.Unlock()
				cli.Close()
				c.t.Fatalf("etcd member %s not healthy: %v\n%s", m.spec.Name, err, tail)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cli.Close()
	}
}

// leader returns the index of the current leader.
func (c *etcdCluster) leader() int {
	c.t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.urls(), TLS: c.clientTLS, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.t.Fatal(err)
	}
	defer cli.Close()
	for i, m := range c.members {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		st, err := cli.Status(ctx, m.spec.ClientURL)
		cancel()
		if err != nil {
			c.t.Fatalf("status of %s: %v", m.spec.Name, err)
		}
		if st.Leader == st.Header.MemberId {
			return i
		}
	}
	c.t.Fatal("no member is the leader")
	return -1
}

func withEtcdCluster(c *etcdCluster) testOption {
	return func(o *app.Options) {
		o.Storage.Backend = "etcd3"
		o.Storage.ServerList = c.urls()
		o.Storage.CAFile, o.Storage.CertFile, o.Storage.KeyFile = c.caFile, c.certFile, c.keyFile
	}
}

// watchEvent is what a test watcher records of each event.
type watchEvent struct {
	typ  string
	name string
	rv   int64
}

// testWatcher is a raw HTTP watch of one namespace's configmaps from a
// resourceVersion: it records every event and whether the stream ended
// before the test stopped it (which would make a client relist).
type testWatcher struct {
	mu     sync.Mutex
	events []watchEvent
	ended  error
	cancel context.CancelFunc
	done   chan struct{}
}

func startWatcher(t *testing.T, c *http.Client, base, ns, rv string) *testWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/"+ns+"/configmaps?watch=1&allowWatchBookmarks=false&resourceVersion="+rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	w := &testWatcher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var ev struct {
				Type   string `json:"type"`
				Object struct {
					Kind     string `json:"kind"`
					Message  string `json:"message"`
					Code     int    `json:"code"`
					Metadata struct {
						Name            string `json:"name"`
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				} `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				w.mu.Lock()
				if ctx.Err() == nil {
					w.ended = fmt.Errorf("watch stream ended: %w", err)
				}
				w.mu.Unlock()
				return
			}
			if ev.Type == "ERROR" {
				w.mu.Lock()
				w.ended = fmt.Errorf("ERROR event: %d %s", ev.Object.Code, ev.Object.Message)
				w.mu.Unlock()
				return
			}
			rv, _ := strconv.ParseInt(ev.Object.Metadata.ResourceVersion, 10, 64)
			w.mu.Lock()
			w.events = append(w.events, watchEvent{typ: ev.Type, name: ev.Object.Metadata.Name, rv: rv})
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *testWatcher) stop() ([]watchEvent, error) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events, w.ended
}

// listConfigMaps lists a namespace's configmaps (query selects the read:
// "" is a consistent read from etcd, "resourceVersion=0" the watch cache).
func listConfigMaps(c *http.Client, base, ns, query string) (code int, rv string, items map[string]int64, body string) {
	res := do(c, http.MethodGet, base+"/api/v1/namespaces/"+ns+"/configmaps?"+query)
	if res.err != nil || res.code != http.StatusOK {
		return res.code, "", nil, fmt.Sprint(res.body, res.err)
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name            string `json:"name"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(res.body), &l); err != nil {
		return res.code, "", nil, err.Error()
	}
	items = map[string]int64{}
	for _, it := range l.Items {
		items[it.Metadata.Name], _ = strconv.ParseInt(it.Metadata.ResourceVersion, 10, 64)
	}
	return res.code, l.Metadata.ResourceVersion, items, res.body
}

func postNamespace(t *testing.T, c *http.Client, base, ns string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
	resp, err := c.Post(base+"/api/v1/namespaces", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create namespace %s: %d", ns, resp.StatusCode)
	}
}

// createIn POSTs a configmap into ns and returns the code and the
// resourceVersion it was created at.
func createIn(c *http.Client, base, ns, name, query string) (int, int64, string) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
	resp, err := c.Post(base+"/api/v1/namespaces/"+ns+"/configmaps"+query, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, 0, err.Error()
	}
	defer resp.Body.Close()
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Message string `json:"message"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&obj)
	rv, _ := strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
	return resp.StatusCode, rv, obj.Message
}

// TestEtcdClusterLoseOneMember: with kapi on --etcd-servers=<three
// members>, SIGKILL the etcd leader (or a follower) while writers create
// configmaps. Every acknowledged write is stored; a watch opened before the
// kill delivers every create exactly once, in resourceVersion order,
// without an ERROR and without ending (a client would relist).
func TestEtcdClusterLoseOneMember(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-member etcd cluster")
	}
	// Mostly waiting (elections, etcd's reconfiguration checks): run
	// beside the package's other waiting tests.
	t.Parallel()
	for _, victim := range []string{"leader", "follower"} {
		t.Run(victim, func(t *testing.T) { testLoseOneMember(t, victim == "leader") })
	}
}

func testLoseOneMember(t *testing.T, killLeader bool) {
	ec := startEtcdCluster(t, 3)
	r := startKapi(t, nil, withEtcdCluster(ec))
	c := r.client(false)
	const ns = "ha-one"
	postNamespace(t, c, r.base, ns)
	code, rv, _, body := listConfigMaps(c, r.base, ns, "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	w := startWatcher(t, c, r.base, ns, rv)

	const writers = 4
	var (
		mu     sync.Mutex
		acked  = map[string]int64{}
		failed []string
		wg     sync.WaitGroup
	)
	stop := make(chan struct{})
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", g, i)
				code, rv, msg := createIn(c, r.base, ns, name, "?timeout=10s")
				mu.Lock()
				if code == http.StatusCreated {
					acked[name] = rv
				} else {
					failed = append(failed, fmt.Sprintf("%s: %d %s", name, code, msg))
				}
				mu.Unlock()
			}
		}()
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitMore := func(n int, what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for ackedCount() < n {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("%s: only %d acknowledged writes (failures %v)", what, ackedCount(), failed)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitMore(50, "before the kill")
	victim := ec.leader()
	if !killLeader {
		victim = (victim + 1) % len(ec.members)
	}
	before := ackedCount()
	ec.members[victim].kill()
	t.Logf("killed %s (leader: %v) after %d writes", ec.members[victim].spec.Name, killLeader, before)
	waitMore(before+100, "after the kill")
	close(stop)
	wg.Wait()
	t.Logf("%d acknowledged writes, %d failed: %v", len(acked), len(failed), failed)
	// A request in flight to the killed member may fail; nothing else may.
	if len(failed) > writers {
		t.Errorf("%d failed writes with %d writers (at most one in flight each): %v", len(failed), writers, failed)
	}

	// Every acknowledged write is stored, at the revision acknowledged.
	code, _, stored, body := listConfigMaps(c, r.base, ns, "")
	if code != http.StatusOK {
		t.Fatalf("list after: %d %s", code, body)
	}
	for name, rv := range acked {
		if got, ok := stored[name]; !ok || got != rv {
			t.Errorf("acknowledged %s at %d: stored %v %d", name, rv, ok, got)
		}
	}
	// The watcher delivers everything stored (the last create may still be
	// on its way).
	deadline := time.Now().Add(10 * time.Second)
	var maxRV int64
	for _, rv := range stored {
		maxRV = max(maxRV, rv)
	}
	for time.Now().Before(deadline) {
		w.mu.Lock()
		n := len(w.events)
		last := int64(0)
		if n > 0 {
			last = w.events[n-1].rv
		}
		w.mu.Unlock()
		if last >= maxRV {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	events, ended := w.stop()
	if ended != nil {
		t.Errorf("watch did not survive the member loss: %v", ended)
	}
	got := map[string]int{}
	var prev int64
	for _, e := range events {
		if e.rv <= prev {
			t.Errorf("watch resourceVersions not increasing: %d after %d", e.rv, prev)
		}
		prev = e.rv
		if e.typ != "ADDED" {
			t.Errorf("unexpected %s event for %s", e.typ, e.name)
		}
		got[e.name]++
	}
	// Everything written after the resourceVersion the watch started at
	// (the namespace's kube-root-ca.crt may be older).
	start, _ := strconv.ParseInt(rv, 10, 64)
	for name, itemRV := range stored {
		if itemRV > start && got[name] != 1 {
			t.Errorf("watch from %d delivered %s (rv %d) %d times, want once", start, name, itemRV, got[name])
		}
	}
	for name := range got {
		if _, ok := stored[name]; !ok {
			t.Errorf("watch delivered %s, which is not stored", name)
		}
	}
}

// TestEtcdClusterLoseQuorum: with two of three members killed, readyz
// fails naming the etcd check, writes answer 504 Timeout within the
// request timeout, and reads the watch cache serves (resourceVersion=0)
// still answer; once the members are back kapi is ready again within 5 s
// and nothing acknowledged before the outage is lost.
func TestEtcdClusterLoseQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-member etcd cluster")
	}
	// Mostly waiting (elections, etcd's reconfiguration checks): run
	// beside the package's other waiting tests.
	t.Parallel()
	ec := startEtcdCluster(t, 3)
	r := startKapi(t, nil, withEtcdCluster(ec))
	c := r.client(false)
	const ns = "ha-quorum"
	postNamespace(t, c, r.base, ns)
	if code, _, msg := createIn(c, r.base, ns, "before", ""); code != http.StatusCreated {
		t.Fatalf("create before: %d %s", code, msg)
	}
	code, rv, _, body := listConfigMaps(c, r.base, ns, "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	w := startWatcher(t, c, r.base, ns, rv)

	ec.members[0].kill()
	ec.members[1].kill()
	down := time.Now()
	for {
		res := do(c, http.MethodGet, r.base+"/readyz?verbose")
		if res.code == http.StatusInternalServerError && strings.Contains(res.body, "[-]etcd failed") {
			break
		}
		if time.Since(down) > 20*time.Second {
			t.Fatalf("readyz without quorum: %d %s", res.code, res.body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A write answers 504 Timeout, within its timeout (plus slack for a
	// loaded machine).
	start := time.Now()
	code, _, msg := createIn(c, r.base, ns, "during", "?timeout=3s")
	took := time.Since(start)
	if code != http.StatusGatewayTimeout {
		t.Errorf("create without quorum: %d %s, want 504", code, msg)
	}
	if took > 3*time.Second+2*time.Second {
		t.Errorf("create without quorum answered after %s, want within the 3s timeout", took)
	}
	t.Logf("create without quorum: %d after %s: %s", code, took, msg)

	// The watch cache still serves resourceVersion=0 reads.
	var items map[string]int64
	code, _, items, body = listConfigMaps(c, r.base, ns, "resourceVersion=0")
	if code != http.StatusOK {
		t.Errorf("list rv=0 without quorum: %d %s", code, body)
	} else if _, ok := items["before"]; !ok {
		t.Errorf("list rv=0 without quorum lacks %q: %v", "before", items)
	}

	ec.members[0].start()
	ec.members[1].start()
	// Measured from when quorum is back (the restarted processes take a
	// moment to start and elect a leader).
	ec.waitHealthy(ec.members[0], ec.members[1])
	up := time.Now()
	for {
		res := do(c, http.MethodGet, r.base+"/readyz")
		if res.code == http.StatusOK {
			break
		}
		if time.Since(up) > 30*time.Second {
			t.Fatalf("readyz 30s after quorum returned: %d %s", res.code, res.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ready %s after the members were restarted", time.Since(up))
	if d := time.Since(up); d > 5*time.Second {
		t.Errorf("ready %s after quorum returned, want within 5s", d)
	}
	if code, _, msg := createIn(c, r.base, ns, "after", "?timeout=5s"); code != http.StatusCreated {
		t.Errorf("create after: %d %s", code, msg)
	}
	code, _, items, body = listConfigMaps(c, r.base, ns, "")
	if code != http.StatusOK {
		t.Fatalf("list after: %d %s", code, body)
	}
	// A watch open through the outage either delivers the write made
	// after it or has ended (ERROR or end of stream: the client relists);
	// it never stays open and silent.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		n, ended := len(w.events), w.ended
		delivered := n > 0 && w.events[n-1].name == "after"
		w.mu.Unlock()
		if delivered || ended != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	events, ended := w.stop()
	switch {
	case ended != nil:
		t.Logf("the watch ended during the outage (the client relists): %v", ended)
	case len(events) > 0 && events[len(events)-1].name == "after":
		t.Logf("the watch stayed open through the outage and delivered the write after it")
		// Then it is gapless: it delivered exactly what was written after
		// the resourceVersion it started at.
		got := map[string]bool{}
		for _, e := range events {
			got[e.name] = true
		}
		start, _ := strconv.ParseInt(rv, 10, 64)
		for name, itemRV := range items {
			if itemRV > start && !got[name] {
				t.Errorf("the watch from %d missed %s at %d: %v", start, name, itemRV, events)
			}
		}
	default:
		t.Errorf("the watch is open but did not deliver the write after the outage: %v", events)
	}
	for _, name := range []string{"before", "after"} {
		if _, ok := items[name]; !ok {
			t.Errorf("%s lost: %v", name, items)
		}
	}
}
