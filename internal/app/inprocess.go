package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/server"
)

// inProcessTransport serves the server's own clients' requests by calling
// the head's handler chain directly: no TCP, TLS or HTTP/2 framing, and no
// serving-side goroutines per connection. The requests go through exactly
// the chain a request on the listener goes through (authentication of the
// loopback token, audit, priority and fairness, authorization, admission,
// managed fields), so what they read and write is what the same request
// over the network would read and write; only the transport differs.
//
// kube-apiserver's loopback client dials its own listener; kapi's start is
// dominated by the ~150 bootstrap writes and the controllers' lists and
// watches of its own clients, where the TLS records and HTTP/2 frames of
// both ends cost about a fifth of the CPU (docs/performance-history.md,
// "Where a kapitest Start goes").
//
// Like the listener, it refuses new requests once the server stopped
// listening; close, run when the server is destroyed, ends the requests
// still in flight (watches of informers not yet stopped) and waits for
// their handlers, before storage is released.
type inProcessTransport struct {
	handler http.Handler
	stopped <-chan struct{} // the server stopped listening

	mu      sync.Mutex
	closed  bool
	nextID  uint64
	cancels map[uint64]context.CancelFunc
	running sync.WaitGroup
}

func newInProcessTransport(head *server.GenericServer) *inProcessTransport {
	t := &inProcessTransport{
		handler: head.Handler(),
		stopped: head.LifecycleSignals().HTTPServerStoppedListening.Signaled(),
		cancels: map[uint64]context.CancelFunc{},
	}
	head.AddDestroyFunc(t.close)
	return t
}

// errLoopbackStopped is what a request gets once the server stopped
// listening, as a network client gets "connection refused".
var errLoopbackStopped = errors.New("in-process loopback: the server is no longer serving")

// inProcessClientConfig is the loopback client config with requests
// served in-process by t (see inProcessTransport).
func (c *Config) inProcessClientConfig(t *inProcessTransport) (*rest.Config, error) {
	cfg, err := c.loopbackClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Transport = t
	return cfg, nil
}

// track registers a request's cancel function; false once closed.
func (t *inProcessTransport) track(cancel context.CancelFunc) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, false
	}
	t.nextID++
	t.cancels[t.nextID] = cancel
	t.running.Add(1)
	return t.nextID, true
}

func (t *inProcessTransport) untrack(id uint64) {
	t.mu.Lock()
	delete(t.cancels, id)
	t.mu.Unlock()
	t.running.Done()
}

// close refuses new requests, cancels those in flight and waits for
// their handlers to return.
func (t *inProcessTransport) close() {
	t.mu.Lock()
	t.closed = true
	for _, cancel := range t.cancels {
		cancel()
	}
	t.mu.Unlock()
	t.running.Wait()
}

// RoundTrip serves req with the handler chain in a goroutine of its own,
// streaming the response body through a pipe (watches stream; each write
// waits for the client to read it, as a connection's flow control does).
// It returns once the handler has written the response's header.
func (t *inProcessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-t.stopped:
		closeBody(req)
		return nil, errLoopbackStopped
	default:
	}
	ctx, cancel := context.WithCancel(req.Context())
	id, ok := t.track(cancel)
	if !ok {
		cancel()
		closeBody(req)
		return nil, errLoopbackStopped
	}
	sreq := serverRequest(ctx, req)
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, headerSent: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer t.untrack(id)
		defer cancel()
		defer close(done)
		defer func() {
			// As net/http's server: a panic (http.ErrAbortHandler from
			// the timeout filter among them) aborts the response.
			if p := recover(); p != nil {
				w.aborted = fmt.Errorf("in-process loopback: handler aborted: %v", p)
				_ = pw.CloseWithError(w.aborted)
				return
			}
			w.sendHeader(http.StatusOK)
			_ = pw.Close()
		}()
		t.handler.ServeHTTP(w, sreq)
		// As a server does once the handler returned (and as
		// RoundTrip's contract asks of the transport).
		_ = sreq.Body.Close()
	}()
	select {
	case <-w.headerSent:
	case <-done:
		select {
		case <-w.headerSent:
		default:
			// The handler aborted before writing anything.
			return nil, w.aborted
		}
	case <-req.Context().Done():
		_ = pr.Close()
		return nil, req.Context().Err()
	}
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &pipeBody{PipeReader: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	return resp, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// serverRequest is req as a server receives it: an origin-form URL, the
// request URI, a loopback remote address.
func serverRequest(ctx context.Context, req *http.Request) *http.Request {
	sreq := req.Clone(ctx)
	sreq.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	sreq.RequestURI = req.URL.RequestURI()
	sreq.Host = req.URL.Host
	sreq.RemoteAddr = "127.0.0.1:0"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.GetBody = nil
	return sreq
}

// pipeWriter is the handler's response writer: the header is handed to
// RoundTrip when first written, the body goes through the pipe.
type pipeWriter struct {
	header     http.Header
	pw         *io.PipeWriter
	once       sync.Once
	headerSent chan struct{}
	status     int
	sent       http.Header // header as written, read after headerSent
	aborted    error       // why the handler aborted, read after it returned
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		return // informational: nothing to hand over
	}
	w.sendHeader(code)
}

func (w *pipeWriter) sendHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.headerSent)
	})
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.sendHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush hands over the header; the body needs no flushing (each write
// reaches the reader directly).
func (w *pipeWriter) Flush() { w.sendHeader(http.StatusOK) }

// pipeBody is the client's response body; closing it ends the request
// (the handler's context is cancelled, its writes fail).
type pipeBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// serve serves req, a request that is not a watch, in the calling
// goroutine and returns the status and body the handler wrote (see
// inProcessTransport: the same handler chain, refused once the server
// stopped listening, tracked until it returns).
func (t *inProcessTransport) serve(req *http.Request) (int, []byte, error) {
	select {
	case <-t.stopped:
		closeBody(req)
		return 0, nil, errLoopbackStopped
	default:
	}
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	id, ok := t.track(cancel)
	if !ok {
		closeBody(req)
		return 0, nil, errLoopbackStopped
	}
	defer t.untrack(id)
	w := &bufferWriter{header: http.Header{}}
	if err := serveRecovering(t.handler, w, serverRequest(ctx, req)); err != nil {
		return 0, nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, w.body.Bytes(), nil
}

// serveRecovering runs h, turning a panic (http.ErrAbortHandler from the
// timeout filter among them) into an error, as net/http's server aborts
// the response.
func serveRecovering(h http.Handler, w http.ResponseWriter, req *http.Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("in-process loopback: handler aborted: %v", p)
		}
	}()
	h.ServeHTTP(w, req)
	_ = req.Body.Close()
	return nil
}

// bufferWriter is serve's response writer: the first status written and
// the body.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *bufferWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

// Flush implements http.Flusher (the body is already in the buffer).
func (w *bufferWriter) Flush() {}
