package app_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// steadyStream sends GET /version continuously from a few workers until
// stopped; it records every request that was sent before `cutoff` fired,
// and whether it succeeded.
type steadyStream struct {
	sent, failedBeforeCutoff atomic.Int64
	firstFailure             atomic.Value
	stop                     chan struct{}
	wg                       sync.WaitGroup
}

func startStream(c *http.Client, url string, cutoff <-chan struct{}) *steadyStream {
	s := &steadyStream{stop: make(chan struct{})}
	for i := 0; i < 4; i++ {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				select {
				case <-s.stop:
					return
				case <-cutoff:
					return
				default:
				}
				res := do(c, http.MethodGet, url)
				s.sent.Add(1)
				select {
				case <-cutoff:
					// Sent around the cutoff: may legitimately fail.
				default:
					if res.err != nil || res.code != 200 {
						s.failedBeforeCutoff.Add(1)
						s.firstFailure.CompareAndSwap(nil, res)
					}
				}
			}
		}()
	}
	return s
}

func (s *steadyStream) finish(t *testing.T) {
	t.Helper()
	close(s.stop)
	s.wg.Wait()
	if n := s.failedBeforeCutoff.Load(); n > 0 {
		t.Fatalf("%d of %d requests sent before the server stopped accepting failed; first: %+v", n, s.sent.Load(), s.firstFailure.Load())
	}
	if s.sent.Load() < 10 {
		t.Fatalf("only %d requests were sent; the stream did not run", s.sent.Load())
	}
}

func TestGracefulTerminationDefaultMode(t *testing.T) {
	for _, http1 := range []bool{false, true} {
		name := "http2"
		if http1 {
			name = "http1"
		}
		t.Run(name, func(t *testing.T) {
			started := make(chan struct{}, 10)
			r := startKapi(t, func(head *server.GenericServer) {
				head.Handler().NonRESTMux.Handle("/test/slow", slowHandler(2*time.Second, started))
			}, func(o *app.Options) { o.Run.ShutdownDelayDuration = 2 * time.Second })
			sig := r.cfg.Generic.LifecycleSignals
			c := r.client(http1)
			stream := startStream(c, r.base+"/version", sig.NotAcceptingNewRequest.Signaled())

			// Slow requests in flight across the stop signal.
			slow := make(chan result, 3)
			for i := 0; i < 3; i++ {
				go func() { slow <- do(c, http.MethodGet, r.base+"/test/slow") }()
			}
			for i := 0; i < 3; i++ {
				<-started
			}
			r.shutdown()
			r.waitSignal(sig.ShutdownInitiated)

			// During the delay: /readyz red, everything else served, even on
			// new connections.
			res := do(c, http.MethodGet, r.base+"/readyz")
			if res.code != 500 || !contains(res.body, "[-]shutdown failed: reason withheld\n", "readyz check failed\n") {
				t.Fatalf("readyz during the delay: %d %q", res.code, res.body)
			}
			// A request is judged only if the delay was still running when
			// its answer came: on a loaded machine (-race, load 18) four new
			// TLS connections can outlast the delay, and what a request
			// gets after it is not this check's business.
			for _, p := range []string{"/livez", "/healthz", "/readyz?exclude=shutdown", "/version"} {
				res := do(r.client(http1), http.MethodGet, r.base+p)
				select {
				case <-sig.AfterShutdownDelayDuration.Signaled():
					t.Logf("%s: the shutdown delay ended before its answer (%d); not judged", p, res.code)
					continue
				default:
				}
				if res.code != 200 {
					t.Fatalf("%s during the delay on a new connection: %d %q %v", p, res.code, res.body, res.err)
				}
			}

			r.waitSignal(sig.NotAcceptingNewRequest)
			// The listener closes: new connections are refused.
			addr := strings.TrimPrefix(r.base, "https://")
			deadline := time.Now().Add(10 * time.Second)
			for {
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					break
				}
				conn.Close()
				if time.Now().After(deadline) {
					t.Fatal("listener still accepting after NotAcceptingNewRequest")
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Requests in flight before shutdown complete with 200.
			for i := 0; i < 3; i++ {
				if res := <-slow; res.err != nil || res.code != 200 || res.body != "done" {
					t.Fatalf("in-flight request cut off: %+v", res)
				}
			}
			stream.finish(t)
			if err := r.runErr(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			r.signals.assertBefore(t, "MuxAndDiscoveryComplete", "HasBeenReady", "ShutdownInitiated", "PreShutdownHooksStopped", "NotAcceptingNewRequest")
			r.signals.assertBefore(t, "ShutdownInitiated", "AfterShutdownDelayDuration", "NotAcceptingNewRequest", "HTTPServerStoppedListening")
			r.signals.assertBefore(t, "NotAcceptingNewRequest", "InFlightRequestsDrained")
		})
	}
}

func TestGracefulTerminationRetryAfterMode(t *testing.T) {
	started := make(chan struct{}, 1)
	r := startKapi(t, func(head *server.GenericServer) {
		head.Handler().NonRESTMux.Handle("/test/slow", slowHandler(3*time.Second, started))
	}, func(o *app.Options) {
		o.Run.ShutdownDelayDuration = 500 * time.Millisecond
		o.Run.ShutdownSendRetryAfter = true
	})
	sig := r.cfg.Generic.LifecycleSignals
	c := r.client(false)
	stream := startStream(c, r.base+"/version", sig.NotAcceptingNewRequest.Signaled())
	slow := make(chan result, 1)
	go func() { slow <- do(c, http.MethodGet, r.base+"/test/slow") }()
	<-started
	r.shutdown()
	r.waitSignal(sig.NotAcceptingNewRequest)

	for _, http1 := range []bool{false, true} {
		// New requests, on new and existing connections, get 429.
		res := do(r.client(http1), http.MethodGet, r.base+"/version")
		if res.code != http.StatusTooManyRequests || res.header.Get("Retry-After") != "5" ||
			res.body != "The apiserver is shutting down, please try again later.\n" {
			t.Fatalf("http1=%v: got %d %q Retry-After=%q, want 429 with Retry-After 5", http1, res.code, res.body, res.header.Get("Retry-After"))
		}
		if http1 && !res.headerClose() {
			t.Fatalf("HTTP/1.1 429 must close the connection, headers %v", res.header)
		}
	}
	// Exempt paths are still served; readyz stays red.
	if res := do(c, http.MethodGet, r.base+"/livez"); res.code != 200 {
		t.Fatalf("livez during retry-after: %d", res.code)
	}
	if res := do(c, http.MethodGet, r.base+"/readyz"); res.code != 500 {
		t.Fatalf("readyz during retry-after: %d", res.code)
	}
	select {
	case <-sig.InFlightRequestsDrained.Signaled():
		t.Fatal("drained while a request was still in flight")
	default:
	}
	if res := <-slow; res.err != nil || res.code != 200 {
		t.Fatalf("in-flight request cut off: %+v", res)
	}
	stream.finish(t)
	if err := r.runErr(); err != nil {
		t.Fatal(err)
	}
	r.signals.assertBefore(t, "ShutdownInitiated", "NotAcceptingNewRequest", "InFlightRequestsDrained", "HTTPServerStoppedListening")
}

func (r result) headerClose() bool {
	// net/http removes "Connection: close" from an HTTP/1.1 response's
	// header and reports it as Response.Close instead.
	return r.close || strings.EqualFold(r.header.Get("Connection"), "close")
}

// watchHandler streams one line per 50ms until the request ends; when the
// server ends watches at shutdown it finishes the response cleanly.
func watchHandler(ended chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		fl := w.(http.Flusher)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				if filters.WatchTerminated(r.Context()) {
					ended <- "terminated"
				} else {
					ended <- "cancelled"
				}
				return
			case <-tick.C:
				_, _ = w.Write([]byte(`{"type":"BOOKMARK"}` + "\n"))
				fl.Flush()
			}
		}
	})
}

func TestWatchTerminationGracePeriod(t *testing.T) {
	ended := make(chan string, 1)
	r := startKapi(t, func(head *server.GenericServer) {
		head.Handler().HandleREST("/apis/test.kapi.dev/v1", watchHandler(ended))
	}, func(o *app.Options) { o.Run.ShutdownWatchTerminationGracePeriod = 5 * time.Second })
	sig := r.cfg.Generic.LifecycleSignals
	c := r.client(false)
	resp, err := c.Get(r.base + "/apis/test.kapi.dev/v1/things?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatal("watch sent nothing")
	}
	lines := make(chan int, 1)
	go func() {
		n := 1
		for sc.Scan() {
			n++
		}
		lines <- n
	}()
	r.shutdown()
	r.waitSignal(sig.NotAcceptingNewRequest)
	if got := <-ended; got != "terminated" {
		t.Fatalf("watch ended %s, want terminated by the server", got)
	}
	select {
	case <-lines: // the stream ended cleanly (EOF, not a reset)
	case <-time.After(10 * time.Second):
		t.Fatal("watch stream did not end")
	}
	if sc.Err() != nil {
		t.Fatalf("watch stream ended with an error: %v", sc.Err())
	}
	if err := r.runErr(); err != nil {
		t.Fatal(err)
	}
	r.signals.assertBefore(t, "NotAcceptingNewRequest", "InFlightRequestsDrained")
}

func TestWatchesKeepStreamingWithoutGracePeriod(t *testing.T) {
	ended := make(chan string, 1)
	r := startKapi(t, func(head *server.GenericServer) {
		head.Handler().HandleREST("/apis/test.kapi.dev/v1", watchHandler(ended))
	}, func(o *app.Options) { o.Run.RequestTimeout = 2 * time.Second })
	sig := r.cfg.Generic.LifecycleSignals
	c := r.client(false)
	resp, err := c.Get(r.base + "/apis/test.kapi.dev/v1/things?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	r.shutdown()
	r.waitSignal(sig.InFlightRequestsDrained)
	// G=0: drained does not wait for the watch, which is still streaming.
	for i := 0; i < 3; i++ {
		if !sc.Scan() {
			t.Fatalf("watch stopped streaming after InFlightRequestsDrained: %v", sc.Err())
		}
	}
	if err := r.runErr(); err != nil {
		t.Fatal(err)
	}
}

func TestAuditLogLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	started := make(chan struct{}, 1)
	r := startKapi(t, func(head *server.GenericServer) {
		head.Handler().NonRESTMux.Handle("/test/slow", slowHandler(time.Second, started))
	}, func(o *app.Options) { o.Audit.LogPath, o.Audit.PolicyFile = path, testaudit.MetadataPolicy(t) })
	c := r.client(false)
	const n = 50
	for i := 0; i < n; i++ {
		if res := do(c, http.MethodGet, r.base+"/version"); res.code != 200 {
			t.Fatal(res)
		}
	}
	slow := make(chan result, 1)
	go func() { slow <- do(c, http.MethodGet, r.base+"/test/slow") }()
	<-started
	r.shutdown()
	if res := <-slow; res.code != 200 {
		t.Fatalf("slow: %+v", res)
	}
	if err := r.runErr(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			Kind, APIVersion, Level, Stage, RequestURI, AuditID string
			ResponseStatus                                      struct{ Code int }
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad audit line %q: %v", sc.Text(), err)
		}
		if ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" || ev.Level != "Metadata" || ev.AuditID == "" {
			t.Fatalf("bad event %+v", ev)
		}
		if ev.Stage == "ResponseComplete" {
			counts[ev.RequestURI]++
		}
	}
	if counts["/version"] != n || counts["/test/slow"] != 1 {
		t.Fatalf("got ResponseComplete events %v, want %d for /version and 1 for /test/slow", counts, n)
	}
}
