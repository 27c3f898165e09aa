package filters

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
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

// A stalled HTTP/1.1 body whose handler closes it once its read failed (as
// the REST handlers' readBody does) is answered with the 504 and the
// connection closed: what is left of the body is never read as a next
// request. See boundedBody.Close for the race this once lost (about 1 run
// in 20 of internal/app's TestStalledBodyIsAnsweredAtTheDeadline); its
// window is too narrow to hit here on purpose, so
// TestBoundedBodyLeavesAFailedBodyToTheServer checks the rule it relies on.
func TestStalledBodyClosedByItsHandlerClosesTheConnection(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { _ = r.Body.Close() }()
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusGatewayTimeout)
		}
	})
	h := BuildChain(api, ChainConfig{Logger: discard(), RequestTimeout: 50 * time.Millisecond})
	srv, _ := startTLS(t, h, false)
	tc := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tc.NextProtos = []string{"http/1.1"}
	addr := srv.Listener.Addr().String()
	conn, err := tls.Dial("tcp", addr, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /api/v1/namespaces/ns/configmaps HTTP/1.1\r\nHost: "+addr+
		"\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"metadata\":"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusGatewayTimeout || string(body) != timeoutBody {
		t.Fatalf("got %d %q (%v), want the timeout filter's 504", resp.StatusCode, body, err)
	}
	if !resp.Close {
		t.Errorf("504 without Connection: close (header %v)", resp.Header)
	}
	if n, err := br.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("after the 504: read %d bytes, %v; want the connection closed", n, err)
	}
}

// A bound body is closed by its handler's Close unless a read of it
// failed: the server, which closes it after the handler, must be the one
// to find it unread (boundedBody.Close says why).
func TestBoundedBodyLeavesAFailedBodyToTheServer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readErr   error // what the wrapped body's read returns; nil: no read
		wantClose bool
	}{
		{"not read", nil, true},
		{"read to its end", io.EOF, true},
		{"read failed on the deadline", os.ErrDeadlineExceeded, false},
		{"read failed otherwise", io.ErrUnexpectedEOF, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingBody{err: tc.readErr}
			b := newBoundedBodyForTest(inner, time.Now().Add(time.Hour))
			if tc.readErr != nil {
				if _, err := b.Read(make([]byte, 8)); err != tc.readErr {
					t.Fatalf("read: got %v, want %v", err, tc.readErr)
				}
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if inner.closed != tc.wantClose {
				t.Errorf("wrapped body closed: %v, want %v", inner.closed, tc.wantClose)
			}
		})
	}
}

// A bound body is not read once a read failed, nor past its bound's
// deadline until it was read to its end: such a read fails at once with
// the deadline's error (see boundedBody.Read), and closing the body is
// still left to the server.
func TestBoundedBodyIsNotReadPastItsBound(t *testing.T) {
	t.Run("past the deadline", func(t *testing.T) {
		inner := &recordingBody{err: io.EOF}
		b := newBoundedBodyForTest(inner, time.Now().Add(-time.Millisecond))
		if _, err := b.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read: got %v, want the deadline's error", err)
		}
		_ = b.Close()
		if inner.reads != 0 || inner.closed {
			t.Errorf("wrapped body read %d times, closed %v; want neither", inner.reads, inner.closed)
		}
	})
	t.Run("after a failed read", func(t *testing.T) {
		inner := &recordingBody{err: io.ErrUnexpectedEOF}
		b := newBoundedBodyForTest(inner, time.Now().Add(time.Hour))
		for range 2 {
			if _, err := b.Read(make([]byte, 8)); err == nil {
				t.Fatal("read: got no error")
			}
		}
		if inner.reads != 1 {
			t.Errorf("wrapped body read %d times, want once", inner.reads)
		}
	})
	t.Run("read to its end, then past the deadline", func(t *testing.T) {
		inner := &recordingBody{err: io.EOF}
		b := newBoundedBodyForTest(inner, time.Now().Add(time.Hour))
		if _, err := b.Read(make([]byte, 8)); err != io.EOF {
			t.Fatalf("read: got %v, want EOF", err)
		}
		b.expires = time.Now().Add(-time.Millisecond)
		if _, err := b.Read(make([]byte, 8)); err != io.EOF {
			t.Errorf("read after the end: got %v, want EOF", err)
		}
		if inner.reads != 2 {
			t.Errorf("wrapped body read %d times, want twice", inner.reads)
		}
	})
}

func newBoundedBodyForTest(inner io.ReadCloser, expires time.Time) *boundedBody {
	bound := &bodyBound{rc: http.NewResponseController(httptest.NewRecorder()), active: true}
	return &boundedBody{ReadCloser: inner, bound: bound, expires: expires}
}

// recordingBody is a request body whose reads return err and which
// records how often it was read and whether it was closed.
type recordingBody struct {
	err    error
	reads  int
	closed bool
}

func (b *recordingBody) Read([]byte) (int, error) { b.reads++; return 0, b.err }
func (b *recordingBody) Close() error             { b.closed = true; return nil }
