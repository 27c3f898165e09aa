package app_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/server"
)

// signalLog records lifecycle signals in the order they fire.
type signalLog struct {
	mu    sync.Mutex
	names []string
	at    map[string]time.Time
}

func (l *signalLog) record(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names = append(l.names, name)
	if l.at == nil {
		l.at = map[string]time.Time{}
	}
	l.at[name] = time.Now()
}

func (l *signalLog) index(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, n := range l.names {
		if n == name {
			return i
		}
	}
	return -1
}

func (l *signalLog) order() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.names...)
}

// assertBefore fails unless every name fired and each fired before the next.
func (l *signalLog) assertBefore(t *testing.T, names ...string) {
	t.Helper()
	for i := 1; i < len(names); i++ {
		a, b := l.index(names[i-1]), l.index(names[i])
		if a < 0 || b < 0 || a > b {
			t.Fatalf("signal order %v: want %s before %s", l.order(), names[i-1], names[i])
		}
	}
}

// running is a whole kapi started in-process as the binary starts it, with
// hooks for tests to add handlers to the head before it runs.
type running struct {
	t       *testing.T
	cfg     *app.Config
	head    *server.GenericServer
	signals *signalLog
	rest    *rest.Config
	base    string
	stop    context.CancelFunc
	done    chan error
	opts    *app.Options
}

type testOption func(*app.Options)

func startKapi(t *testing.T, addRoutes func(head *server.GenericServer), opts ...testOption) *running {
	t.Helper()
	var before func(*app.Config, *server.GenericServer)
	if addRoutes != nil {
		before = func(_ *app.Config, head *server.GenericServer) { addRoutes(head) }
	}
	return startKapiWith(t, before, opts...)
}

// startKapiWith is startKapi with the config at hand: before, if set, is
// called with the config and the head once the chain is built, before it
// runs.
func startKapiWith(t *testing.T, before func(*app.Config, *server.GenericServer), opts ...testOption) *running {
	t.Helper()
	o := app.NewOptions()
	o.DataDir = t.TempDir()
	o.SecureServing.BindPort = 0
	o.Storage.Backend = "memory"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	sl := &signalLog{}
	o.OnLifecycleSignal = sl.record
	o.OnPostStartHookError = func(name string, err error) { t.Errorf("post-start hook %s: %v", name, err) }
	for _, opt := range opts {
		opt(o)
	}
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	head, err := app.CreateServerChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(cfg, head)
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &running{t: t, cfg: cfg, head: head, signals: sl, stop: stop, done: make(chan error, 1), opts: o}
	prepared := head.PrepareRun()
	go func() { r.done <- prepared.Run(ctx) }()
	r.rest, err = clientcmd.BuildConfigFromFlags("", completed.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// As kapitest's clients: client-go's default limit (5 requests a
	// second, bursts of 10) made a test of a few hundred requests wait
	// for most of its time (TestInProcessLoopbackStoresWhatTheNetworkDoes:
	// 82 s, 0.9 s of it CPU).
	r.rest.QPS, r.rest.Burst = 1000, 2000
	r.base = r.rest.Host
	t.Cleanup(func() {
		r.shutdown()
		select {
		case <-r.done:
		case <-time.After(2 * time.Minute):
			t.Error("kapi did not stop")
		}
	})
	r.waitReady()
	return r
}

func (r *running) shutdown() { r.stop() }

// client returns an admin client; http1 forces HTTP/1.1.
func (r *running) client(http1 bool) *http.Client {
	r.t.Helper()
	tc, err := rest.TLSConfigFor(r.rest)
	if err != nil {
		r.t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: !http1}
	if http1 {
		tc.NextProtos = []string{"http/1.1"}
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	r.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// anonymous returns a client that trusts the server but has no credentials.
func (r *running) anonymous() *http.Client {
	tc, err := rest.TLSConfigFor(r.rest)
	if err != nil {
		r.t.Fatal(err)
	}
	tc.Certificates = nil
	tc.GetClientCertificate = nil
	tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}
	r.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func (r *running) waitReady() {
	r.t.Helper()
	c := r.client(false)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := c.Get(r.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.t.Fatal("kapi not ready within 30s")
}

func (r *running) waitSignal(s server.Signal) {
	r.t.Helper()
	select {
	case <-s.Signaled():
	case <-time.After(60 * time.Second):
		r.t.Fatalf("%s did not fire", s.Name())
	}
}

func (r *running) runErr() error {
	r.t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(2 * time.Minute):
		r.t.Fatal("Run did not return")
		return nil
	}
}

type result struct {
	code   int
	body   string
	header http.Header
	close  bool // HTTP/1.1 "Connection: close" (net/http strips the header)
	err    error
}

func do(c *http.Client, method, url string) result {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return result{err: err}
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{code: resp.StatusCode, body: string(b), header: resp.Header, close: resp.Close, err: err}
}

// slowHandler answers 200 "done" after d, unless the request is cancelled.
func slowHandler(d time.Duration, started chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if started != nil {
			started <- struct{}{}
		}
		select {
		case <-time.After(d):
			_, _ = io.WriteString(w, "done")
		case <-r.Context().Done():
		}
	})
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
