package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func newTestTransport(h http.Handler) (*inProcessTransport, chan struct{}) {
	stopped := make(chan struct{})
	return &inProcessTransport{handler: h, stopped: stopped, cancels: map[uint64]context.CancelFunc{}}, stopped
}

func TestInProcessTransportUnary(t *testing.T) {
	tr, _ := newTestTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		// What a server sees: an origin-form URL and request URI, the
		// client's headers, a loopback peer.
		if r.URL.Host != "" || r.RequestURI != "/apis/x/v1/things?watch=false" || r.Host != "127.0.0.1:6443" ||
			r.Header.Get("Authorization") != "Bearer tok" || !strings.HasPrefix(r.RemoteAddr, "127.0.0.1:") {
			t.Errorf("server request: URL %v, RequestURI %q, Host %q, headers %v, RemoteAddr %q", r.URL, r.RequestURI, r.Host, r.Header, r.RemoteAddr)
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(append([]byte("got "), body...))
		w.Header().Set("X-Late", "ignored") // after the header was written
	}))
	req, _ := http.NewRequest(http.MethodPost, "https://127.0.0.1:6443/apis/x/v1/things?watch=false", strings.NewReader("hello"))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated || string(body) != "got hello" ||
		resp.Header.Get("Content-Type") != "text/plain" || resp.Header.Get("X-Late") != "" {
		t.Fatalf("response: %d %v %q, err %v", resp.StatusCode, resp.Header, body, err)
	}
	tr.close() // nothing in flight: returns at once
}

// A streamed response (a watch) reaches the client event by event, and
// closing the body ends the handler.
func TestInProcessTransportStreamsAndCancels(t *testing.T) {
	ended := make(chan error, 1)
	tr, _ := newTestTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, "event\n"); err != nil {
				<-r.Context().Done()
				ended <- r.Context().Err()
				return
			}
			if i == 2 {
				<-r.Context().Done()
				ended <- r.Context().Err()
				return
			}
		}
	}))
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/watch", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event\n" {
		t.Fatalf("first event: %q, %v", line, err)
	}
	_ = resp.Body.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler context: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the body did not end the handler")
	}
	tr.close()
}

// Once the server stopped listening, requests are refused; close ends the
// requests in flight and waits for their handlers.
func TestInProcessTransportStopAndClose(t *testing.T) {
	returned := make(chan struct{})
	tr, stopped := newTestTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		w.WriteHeader(http.StatusOK)
		<-r.Context().Done()
	}))
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/watch", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	close(stopped)
	if _, err := tr.RoundTrip(req.Clone(context.Background())); !errors.Is(err, errLoopbackStopped) {
		t.Fatalf("request after the server stopped listening: %v", err)
	}
	tr.close()
	select {
	case <-returned:
	default:
		t.Fatal("close returned before the handler in flight")
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("body of the closed request: %v", err)
	}
}

// A handler that aborts (panics with http.ErrAbortHandler, as the timeout
// filter does) before writing fails the request, as a reset stream does.
func TestInProcessTransportAbort(t *testing.T) {
	tr, _ := newTestTransport(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/x", nil)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatalf("aborted handler: got %d, want an error", resp.StatusCode)
	}
	tr.close()
}

// serve answers in the caller's goroutine with the status and body the
// handler wrote (a status written twice keeps the first), turns a handler's
// panic into an error, and refuses requests once the server stopped
// listening.
func TestInProcessTransportServe(t *testing.T) {
	tr, stopped := newTestTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			panic(http.ErrAbortHandler)
		case "/plain":
			_, _ = io.WriteString(w, "no status written")
			return
		}
		body, _ := io.ReadAll(r.Body)
		if r.RequestURI != "/apis/x/v1/things" || r.Host != "127.0.0.1:6443" || r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("server request: RequestURI %q, Host %q, headers %v", r.RequestURI, r.Host, r.Header)
		}
		w.WriteHeader(http.StatusConflict)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append([]byte("got "), body...))
	}))
	req, _ := http.NewRequest(http.MethodPost, "https://127.0.0.1:6443/apis/x/v1/things", strings.NewReader("hello"))
	req.Header.Set("Authorization", "Bearer tok")
	status, body, err := tr.serve(req)
	if err != nil || status != http.StatusConflict || string(body) != "got hello" {
		t.Fatalf("serve: got %d %q %v, want 409 \"got hello\" <nil>", status, body, err)
	}
	req, _ = http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/plain", nil)
	if status, body, err := tr.serve(req); err != nil || status != http.StatusOK || string(body) != "no status written" {
		t.Fatalf("serve without WriteHeader: got %d %q %v, want 200", status, body, err)
	}
	req, _ = http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/panic", nil)
	if _, _, err := tr.serve(req); err == nil || !strings.Contains(err.Error(), "handler aborted") {
		t.Fatalf("serve of a panicking handler: got %v, want a handler-aborted error", err)
	}
	close(stopped)
	req, _ = http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/plain", nil)
	if _, _, err := tr.serve(req); !errors.Is(err, errLoopbackStopped) {
		t.Fatalf("serve after the server stopped listening: got %v, want %v", err, errLoopbackStopped)
	}
	tr.close()
}
