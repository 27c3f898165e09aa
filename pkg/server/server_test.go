package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/server/healthz"
)

// recorder records lifecycle signals in the order they fire.
type recorder struct {
	mu    sync.Mutex
	names []string
}

func (r *recorder) record(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
}

func (r *recorder) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

func (r *recorder) index(name string) int {
	for i, n := range r.order() {
		if n == name {
			return i
		}
	}
	return -1
}

// testChain builds aggregator -> core -> apiextensions -> not-found with a
// minimal filter chain that marks requests entering before
// MuxAndDiscoveryComplete and counts how often filters ran.
type testChain struct {
	cfg        *Config
	head       *GenericServer
	core, ext  *GenericServer
	filterRuns atomic.Int64
	rec        *recorder
	extSignal  chan struct{}
}

func newTestChain(t *testing.T, mutate func(*Config)) *testChain {
	t.Helper()
	tc := &testChain{rec: &recorder{}, extSignal: make(chan struct{})}
	cfg := NewConfig(nil)
	cfg.LifecycleSignals = NewLifecycleSignals(nil, tc.rec.record)
	sig := cfg.LifecycleSignals
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *Config) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tc.filterRuns.Add(1)
			select {
			case <-sig.MuxAndDiscoveryComplete.Signaled():
			default:
				r = r.WithContext(request.WithMuxIncomplete(r.Context()))
			}
			h.ServeHTTP(w, r)
		})
	}
	if mutate != nil {
		mutate(cfg)
	}
	tc.cfg = cfg
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ext, err := completed.New("apiextensions-apiserver", NewEmptyDelegate(NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.RegisterMuxAndDiscoveryCompleteSignal("CRDInformerHasNotSynced", tc.extSignal); err != nil {
		t.Fatal(err)
	}
	ext.Handler().NonRESTMux.Handle("/ext", text("ext"))
	ext.Handler().HandleREST("/apis/ext.example.com", text("ext-rest"))
	core, err := completed.New("kube-apiserver", ext)
	if err != nil {
		t.Fatal(err)
	}
	core.Handler().NonRESTMux.Handle("/core", text("core"))
	core.Handler().HandleREST("/api/v1", text("core-rest"))
	head, err := completed.New("kube-aggregator", core)
	if err != nil {
		t.Fatal(err)
	}
	head.Handler().NonRESTMux.Handle("/agg", text("agg"))
	tc.head, tc.core, tc.ext = head, core, ext
	return tc
}

func text(s string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, s) })
}

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
	return rr
}

func TestChainDelegation(t *testing.T) {
	tc := newTestChain(t, nil)
	close(tc.extSignal)
	tc.head.PrepareRun()
	tests := []struct {
		path, want string
		code       int
	}{
		{"/agg", "agg", 200},
		{"/core", "core", 200},
		{"/ext", "ext", 200},
		{"/api/v1", "core-rest", 200},
		{"/api/v1/namespaces", "core-rest", 200},
		{"/apis/ext.example.com/v1", "ext-rest", 200},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			before := tc.filterRuns.Load()
			rr := get(t, tc.head.Handler(), tt.path)
			if rr.Code != tt.code || rr.Body.String() != tt.want {
				t.Fatalf("got %d %q, want %d %q", rr.Code, rr.Body.String(), tt.code, tt.want)
			}
			if n := tc.filterRuns.Load() - before; n != 1 {
				t.Fatalf("filters ran %d times, want once (only at the head)", n)
			}
		})
	}
}

func TestNotFoundBeforeAndAfterMuxComplete(t *testing.T) {
	tc := newTestChain(t, nil)
	prepared := tc.head.PrepareRun()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- prepared.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	rr := get(t, tc.head.Handler(), "/apis/unknown.example.com/v1/things")
	if rr.Code != http.StatusServiceUnavailable {
		t.Fatalf("before MuxAndDiscoveryComplete: got %d, want 503", rr.Code)
	}
	if got := rr.Header().Get("Retry-After"); got != "5" {
		t.Fatalf("Retry-After: got %q, want 5", got)
	}
	var st metav1.Status
	if err := json.Unmarshal(rr.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.Reason != metav1.StatusReasonServiceUnavailable || st.Details == nil || st.Details.RetryAfterSeconds != 5 ||
		st.Message != "the request has been made before all known HTTP paths have been installed, please try again" {
		t.Fatalf("got status %+v", st)
	}

	close(tc.extSignal) // the last mux signal: MuxAndDiscoveryComplete fires
	select {
	case <-tc.cfg.LifecycleSignals.MuxAndDiscoveryComplete.Signaled():
	case <-time.After(10 * time.Second):
		t.Fatal("MuxAndDiscoveryComplete did not fire")
	}
	rr = get(t, tc.head.Handler(), "/apis/unknown.example.com/v1/things")
	if rr.Code != http.StatusNotFound || rr.Body.String() != "404 page not found\n" {
		t.Fatalf("after: got %d %q, want 404", rr.Code, rr.Body.String())
	}
	if ct := rr.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
}

func TestUnknownPathUnderRESTRootDoesNotFallThrough(t *testing.T) {
	cfg := NewConfig(nil)
	v := struct{ Major string }{"1"}
	_ = v
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	fallthroughHit := false
	s, err := completed.New("x", NewEmptyDelegate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fallthroughHit = true })))
	if err != nil {
		t.Fatal(err)
	}
	s.Handler().HandleREST("/version", versionHandler(map[string]string{"major": "1"}))
	rr := get(t, s.Handler(), "/version/nope")
	if rr.Code != http.StatusNotFound || fallthroughHit {
		t.Fatalf("got %d (fell through: %v), want 404 from the REST root", rr.Code, fallthroughHit)
	}
	if !strings.Contains(rr.Body.String(), "the server could not find the requested resource") {
		t.Fatalf("body %q", rr.Body.String())
	}
	// "/apis" claims only /apis and /apis/.
	s.Handler().HandleREST("/apis", text("apis"))
	if rr := get(t, s.Handler(), "/apis/"); rr.Body.String() != "apis" {
		t.Fatalf("/apis/: got %q", rr.Body.String())
	}
	get(t, s.Handler(), "/apis/foo/v1")
	if !fallthroughHit {
		t.Fatal("/apis/foo/v1 must fall through, /apis only claims /apis and /apis/")
	}
}

func TestVersionEndpoint(t *testing.T) {
	cfg := NewConfig(nil)
	cfg.Version = nil
	completed, _ := cfg.Complete()
	s, err := completed.New("x", NewEmptyDelegate(NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	s.Handler().HandleREST("/version", versionHandler(map[string]string{"major": "1", "minor": "37"}))
	rr := get(t, s.Handler(), "/version")
	if rr.Code != 200 || rr.Body.String() != "{\n  \"major\": \"1\",\n  \"minor\": \"37\"\n}" {
		t.Fatalf("got %d %q", rr.Code, rr.Body.String())
	}
	rr = httptest.NewRecorder()
	s.Handler().ServeHTTP(rr, httptest.NewRequest(http.MethodPost, "/version", nil))
	if rr.Code != http.StatusMethodNotAllowed || !strings.Contains(rr.Body.String(), `"kind":"Status"`) {
		t.Fatalf("POST /version: got %d %q, want 405 Status", rr.Code, rr.Body.String())
	}
}

func TestHooksAndHealthCollectedByHead(t *testing.T) {
	tc := newTestChain(t, nil)
	release := make(chan struct{})
	if err := tc.ext.AddPostStartHook("ext-hook", func(ctx context.Context) error { <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := tc.ext.AddPostStartHook("ext-hook", func(context.Context) error { return nil }); err == nil {
		t.Fatal("duplicate post-start hook: want error")
	}
	// The core server copies ext's checks when created, so a hook added to
	// ext afterwards is not on the head: register before building, as the
	// chain does. Here we rebuild a chain with the hook added early.
	tc = newTestChain(t, nil)
	if err := tc.ext.AddPreShutdownHook("", func() error { return nil }); err == nil {
		t.Fatal("empty pre-shutdown hook name: want error")
	}
	if err := tc.head.AddPostStartHook("head-hook", func(ctx context.Context) error { <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	prepared := tc.head.PrepareRun()
	if err := tc.head.AddHealthChecks(healthz.PingHealthz); err == nil || !strings.Contains(err.Error(), "endpoint has already been created") {
		t.Fatalf("late health check: got %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- prepared.Run(ctx) }()

	rr := get(t, tc.head.Handler(), "/readyz?verbose")
	if rr.Code != 500 || !strings.Contains(rr.Body.String(), "[-]poststarthook/head-hook failed: reason withheld") {
		t.Fatalf("readyz before hook finished: %d %q", rr.Code, rr.Body.String())
	}
	rr = get(t, tc.head.Handler(), "/readyz/poststarthook/head-hook")
	if rr.Code != 500 || rr.Body.String() != "internal server error: not finished\n" {
		t.Fatalf("single hook check: %d %q", rr.Code, rr.Body.String())
	}
	close(release)
	close(tc.extSignal)
	waitFor(t, func() bool { return get(t, tc.head.Handler(), "/readyz").Code == 200 })
	select {
	case <-tc.cfg.LifecycleSignals.HasBeenReady.Signaled():
	default:
		t.Fatal("HasBeenReady did not fire on the first 200 of /readyz")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rr = get(t, tc.head.Handler(), "/readyz?verbose")
	if rr.Code != 500 || !strings.Contains(rr.Body.String(), "[-]shutdown failed: reason withheld\nreadyz check failed\n") {
		t.Fatalf("readyz after shutdown: %d %q", rr.Code, rr.Body.String())
	}
	if rr := get(t, tc.head.Handler(), "/livez"); rr.Code != 200 {
		t.Fatalf("livez after shutdown: %d", rr.Code)
	}
}

func TestPreShutdownHookErrorIsReturned(t *testing.T) {
	tc := newTestChain(t, nil)
	close(tc.extSignal)
	if err := tc.core.AddPreShutdownHook("boom", func() error { return errors.New("bad") }); err != nil {
		t.Fatal(err)
	}
	// the head copies hooks at construction; rebuild so the head has it
	tc2 := newTestChain(t, nil)
	close(tc2.extSignal)
	if err := tc2.head.AddPreShutdownHook("boom", func() error { return errors.New("bad") }); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	err := tc2.head.PrepareRun().Run(ctx)
	if err == nil || err.Error() != `PreShutdownHook "boom" failed: bad` {
		t.Fatalf("got %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, "condition", cond)
}

// tlsServing returns serving info on a free loopback port with an
// in-memory PKI, and a client trusting it.
func tlsServing(t *testing.T) (*SecureServingInfo, *http.Client, string) {
	t.Helper()
	b, err := pki.Ensure(pki.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(context.Background(), "tcp", "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(b.CA)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &SecureServingInfo{Listener: ln, Cert: &b.Serving}, &http.Client{Transport: tr, Timeout: 30 * time.Second}, "https://" + ln.Addr().String()
}

func TestRunDefaultModeSignalOrder(t *testing.T) {
	serving, client, base := tlsServing(t)
	tc := newTestChain(t, func(c *Config) {
		c.SecureServing = serving
		c.ShutdownDelayDuration = 300 * time.Millisecond
	})
	close(tc.extSignal)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tc.head.PrepareRun().Run(ctx) }()

	waitFor(t, func() bool {
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	resp, err := client.Get(base + "/agg")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("got %s, want HTTP/2", resp.Proto)
	}

	stop()
	// During the delay: /readyz is red, other requests are served.
	waitFor(t, func() bool {
		select {
		case <-tc.cfg.LifecycleSignals.ShutdownInitiated.Signaled():
			return true
		default:
			return false
		}
	})
	resp, err = client.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(body), "[-]shutdown failed: reason withheld") {
		t.Fatalf("readyz during delay: %d %q", resp.StatusCode, body)
	}
	resp, err = client.Get(base + "/core")
	if err != nil {
		t.Fatalf("request during the delay must be served: %v", err)
	}
	resp.Body.Close()

	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The listener is closed: a new connection is refused.
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	if _, err := fresh.Get(base + "/agg"); err == nil {
		t.Fatal("after shutdown a new connection must fail")
	}
	want := []string{"MuxAndDiscoveryComplete", "HasBeenReady", "ShutdownInitiated", "PreShutdownHooksStopped", "AfterShutdownDelayDuration", "NotAcceptingNewRequest"}
	for i := 1; i < len(want); i++ {
		if a, b := tc.rec.index(want[i-1]), tc.rec.index(want[i]); a < 0 || b < 0 || a > b {
			t.Fatalf("order %v: want %s before %s", tc.rec.order(), want[i-1], want[i])
		}
	}
	for _, late := range []string{"InFlightRequestsDrained", "HTTPServerStoppedListening"} {
		if tc.rec.index(late) < tc.rec.index("NotAcceptingNewRequest") {
			t.Fatalf("order %v: %s must follow NotAcceptingNewRequest", tc.rec.order(), late)
		}
	}
}

// TestProfiling checks /debug/pprof/ as upstream serves it with
// --profiling: the index and the named profiles, the bare path redirected,
// none of it in the root index; and nothing without the flag.
func TestProfiling(t *testing.T) {
	tc := newTestChain(t, func(c *Config) { c.EnableProfiling = true })
	h := tc.head.Handler()
	if rr := get(t, h, "/debug/pprof/"); rr.Code != 200 || !strings.Contains(rr.Body.String(), "goroutine") {
		t.Errorf("/debug/pprof/: got %d %.200q", rr.Code, rr.Body.String())
	}
	if rr := get(t, h, "/debug/pprof/heap?debug=1"); rr.Code != 200 || !strings.Contains(rr.Body.String(), "heap profile") {
		t.Errorf("/debug/pprof/heap: got %d %.200q", rr.Code, rr.Body.String())
	}
	if rr := get(t, h, "/debug/pprof"); rr.Code != http.StatusFound || rr.Header().Get("Location") != "/debug/pprof/" {
		t.Errorf("/debug/pprof: got %d to %q, want 302 to /debug/pprof/", rr.Code, rr.Header().Get("Location"))
	}
	if rr := get(t, h, "/"); strings.Contains(rr.Body.String(), "pprof") {
		t.Errorf("root index lists the profiles: %s", rr.Body.String())
	}
	off := newTestChain(t, nil)
	// Not served: the not-found handler answers (503 until the mux is
	// complete, which this chain never signals; 404 after).
	if rr := get(t, off.head.Handler(), "/debug/pprof/"); rr.Code != http.StatusServiceUnavailable {
		t.Errorf("without profiling: /debug/pprof/ got %d, want the not-found handler's 503", rr.Code)
	}
}
