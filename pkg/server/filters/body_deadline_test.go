package filters

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// A request body that stalls is bound by the request's deadline, on
// HTTP/1.1 and HTTP/2: the client gets the timeout filter's 504 at the
// deadline, the handler's read of the body fails just after, and the
// handler goroutine ends instead of waiting on the client.
func TestStalledBodyIsBoundByTheDeadline(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			readErr := make(chan error, 1)
			api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, err := io.ReadAll(r.Body)
				readErr <- err
				if err != nil {
					w.WriteHeader(http.StatusGatewayTimeout)
				}
			})
			handlers := &SafeWaitGroup{}
			h := BuildChain(api, ChainConfig{Logger: discard(), RequestTimeout: 300 * time.Millisecond, TimedOutHandlers: handlers})
			srv, c := startTLS(t, h, proto.http2)

			pr, pw := io.Pipe()
			defer pw.Close()
			// The client gives up after 20s: without the bound the server
			// would hold the request as long as the client waits.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/namespaces/ns/configmaps", pr)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = 1 << 10
			go func() { _, _ = pw.Write([]byte(`{"metadata":`)) }() // and nothing more
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusGatewayTimeout || string(body) != timeoutBody {
				t.Errorf("got %d %q, want the timeout filter's 504", resp.StatusCode, body)
			}
			select {
			case err := <-readErr:
				// The deadline's error, or (HTTP/2) the stream's end
				// once the 504 was sent.
				if err == nil {
					t.Errorf("handler's read: got the whole body, want an error")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler is still reading the stalled body 10s after its deadline")
			}
			done := make(chan struct{})
			go func() { handlers.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%d handler goroutines outlive their request", handlers.Count())
			}
		})
	}
}

// A body read to its end lifts the bound: on HTTP/1.1 a handler that runs
// past its deadline after reading its body must not cancel the
// connection, and the next request on the same connection is served with
// a live context. A body that arrives in time is read whole.
func TestReadBodyLeavesTheConnectionUsable(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			release := make(chan struct{})
			api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, err := io.ReadAll(r.Body)
				if err != nil || string(body) != "payload" {
					t.Errorf("%s: read %q %v", r.URL.Path, body, err)
				}
				if strings.HasSuffix(r.URL.Path, "/slow") {
					<-r.Context().Done()
					<-release
					return
				}
				if err := r.Context().Err(); err != nil {
					t.Errorf("%s: context already done: %v", r.URL.Path, err)
				}
				_, _ = io.WriteString(w, "ok")
			})
			h := BuildChain(api, ChainConfig{Logger: discard(), RequestTimeout: 300 * time.Millisecond})
			srv, c := startTLS(t, h, proto.http2)
			defer close(release)
			post := func(path string) (int, bool) {
				reused := false
				trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
				req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("payload"))
				if err != nil {
					t.Fatal(err)
				}
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("POST %s: %v", path, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode, reused
			}
			if code, _ := post("/api/v1/namespaces/ns/configmaps/slow"); code != http.StatusGatewayTimeout {
				t.Fatalf("slow: got %d, want 504", code)
			}
			// Past the slow request's deadline, on the same connection.
			time.Sleep(300 * time.Millisecond)
			code, reused := post("/api/v1/namespaces/ns/configmaps")
			if code != http.StatusOK {
				t.Errorf("next request: got %d, want 200", code)
			}
			if !reused {
				t.Errorf("next request: a new connection, want the same one")
			}
		})
	}
}
