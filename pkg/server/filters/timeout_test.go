package filters

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

const timeoutBody = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"

// timeoutChain is RequestInfo -> RequestDeadline(T) -> Timeout -> h.
func timeoutChain(h http.Handler, T time.Duration, running *SafeWaitGroup) http.Handler {
	return withInfo(WithRequestDeadline(WithTimeout(h, DefaultLongRunning, running, discard()), T, DefaultLongRunning, discard()))
}

func TestWithTimeout(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			var running SafeWaitGroup
			lateWrite := make(chan error, 1)
			got504 := make(chan struct{})
			partialSeen := make(chan struct{})
			mux := http.NewServeMux()
			mux.HandleFunc("/api/v1/namespaces/ns/pods/slow", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Handler", "yes") // must not leak into the 504
				<-r.Context().Done()
				<-got504 // write only after the client has the 504
				_, err := w.Write([]byte("late"))
				lateWrite <- err
			})
			mux.HandleFunc("/api/v1/namespaces/ns/pods/partial", func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("started"))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				<-partialSeen // return only after the client saw the abort
			})
			mux.HandleFunc("/api/v1/namespaces/ns/pods/fast", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Handler", "yes")
				w.WriteHeader(201)
				_, _ = w.Write([]byte("done"))
			})
			mux.HandleFunc("/api/v1/watch/namespaces/ns/pods/watchme", func(w http.ResponseWriter, r *http.Request) {
				if _, ok := r.Context().Deadline(); ok {
					t.Errorf("long-running request has a deadline")
				}
				_, _ = w.Write([]byte("streamed"))
			})
			srv, c := startTLS(t, timeoutChain(mux, 100*time.Millisecond, &running), proto.http2)

			resp, body := get(t, c, srv.URL+"/api/v1/namespaces/ns/pods/slow", nil)
			if resp.StatusCode != 504 || body != timeoutBody {
				t.Errorf("slow: got %d %q, want 504 %q", resp.StatusCode, body, timeoutBody)
			}
			if resp.Header.Get("X-Handler") != "" {
				t.Errorf("slow: handler header leaked into the 504")
			}
			close(got504)
			if err := <-lateWrite; !errors.Is(err, http.ErrHandlerTimeout) {
				t.Errorf("late write: got %v, want http.ErrHandlerTimeout", err)
			}

			resp, err := c.Get(srv.URL + "/api/v1/namespaces/ns/pods/partial")
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if err == nil {
				t.Errorf("partial: got a complete response, want an aborted one")
			}
			close(partialSeen)

			resp, body = get(t, c, srv.URL+"/api/v1/namespaces/ns/pods/fast", nil)
			if resp.StatusCode != 201 || body != "done" || resp.Header.Get("X-Handler") != "yes" {
				t.Errorf("fast: got %d %q X-Handler=%q, want 201 done yes", resp.StatusCode, body, resp.Header.Get("X-Handler"))
			}

			resp, body = get(t, c, srv.URL+"/api/v1/watch/namespaces/ns/pods/watchme", nil)
			if resp.StatusCode != 200 || body != "streamed" {
				t.Errorf("watch: got %d %q, want 200 streamed", resp.StatusCode, body)
			}
			running.Wait() // every handler goroutine has returned
		})
	}
}

// Flush passes through the timeout writer: the client reads the first chunk
// while the handler is still running.
func TestWithTimeoutFlush(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			release := make(chan struct{})
			h := timeoutChain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "first\n")
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("flush: %v", err)
				}
				<-release
				_, _ = io.WriteString(w, "second\n")
			}), time.Minute, nil)
			srv, c := startTLS(t, h, proto.http2)
			resp, err := c.Get(srv.URL + "/api/v1/pods")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "first\n" {
				t.Fatalf("got %q %v, want first line before the handler finished", line, err)
			}
			close(release)
			rest, _ := io.ReadAll(br)
			if string(rest) != "second\n" {
				t.Errorf("got %q, want second", rest)
			}
		})
	}
}

func TestWithTimeoutPanicPropagates(t *testing.T) {
	h := timeoutChain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), time.Minute, nil)
	defer func() {
		p := recover()
		s, _ := p.(string)
		if !strings.HasPrefix(s, "boom\n") || !strings.Contains(s, "goroutine") {
			t.Errorf("got panic %v, want boom with the handler stack", p)
		}
	}()
	h.ServeHTTP(nopWriter{make(http.Header)}, mustRequest(t, "/api/v1/pods"))
}

type nopWriter struct{ h http.Header }

func (w nopWriter) Header() http.Header         { return w.h }
func (w nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w nopWriter) WriteHeader(int)             {}

func mustRequest(t *testing.T, target string) *http.Request {
	t.Helper()
	r, err := http.NewRequest("GET", "http://x"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.RequestURI = target
	return r
}

// The timeout writer hands the handler's headers to the real writer at
// WriteHeader: headers set before the filter stay unless the handler
// removes them, and what the handler changes afterwards reaches neither the
// response nor the real writer's map.
func TestTimeoutWriterHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Outer", "o")
	rec.Header().Set("Gone", "g")
	tw := newTimeoutWriter(rec)
	h := tw.Header()
	h.Del("Gone")
	h.Set("Inner", "i")
	h.Add("Outer", "o2")
	h["Spare"] = make([]string, 1, 4) // room to append in place
	h["Spare"][0] = "s"
	tw.WriteHeader(http.StatusCreated)
	h.Add("Inner", "late")
	h.Add("Spare", "late")
	h.Set("Outer", "changed")
	h.Set("Added", "late")
	_, _ = tw.Write([]byte("x"))

	want := http.Header{"Outer": {"o", "o2"}, "Inner": {"i"}, "Spare": {"s"}}
	res := rec.Result()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("got status %d, want 201", res.StatusCode)
	}
	for name, got := range map[string]http.Header{"response": res.Header, "writer map": rec.Header()} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s headers: got %v, want %v", name, got, want)
		}
	}
}

// TestDeadlineHandsContextToTimeout: the deadline filter passes the
// context it makes straight to the timeout filter that follows it (which
// copies the request for its handler anyway) instead of copying the
// request for it: one allocation less per request than with anything
// between the two, and the handler's request carries the deadline as
// before, with the same deadline for a body-less GET and for a PUT (whose
// body the deadline filter bounds, on a copy).
func TestDeadlineHandsContextToTimeout(t *testing.T) {
	const T = time.Minute
	var sawDeadline bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, sawDeadline = r.Context().Deadline()
	})
	direct := withInfo(WithRequestDeadline(WithTimeout(h, DefaultLongRunning, nil, discard()), T, DefaultLongRunning, discard()))
	timeout := WithTimeout(h, DefaultLongRunning, nil, discard())
	between := withInfo(WithRequestDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timeout.ServeHTTP(w, r)
	}), T, DefaultLongRunning, discard()))
	for _, method := range []string{http.MethodGet, http.MethodPut} {
		for name, chain := range map[string]http.Handler{"direct": direct, "between": between} {
			var body io.Reader
			if method == http.MethodPut {
				body = strings.NewReader("{}")
			}
			sawDeadline = false
			chain.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/api/v1/namespaces/ns/pods/a", body))
			if !sawDeadline {
				t.Errorf("%s %s: the handler's request has no deadline", method, name)
			}
		}
	}

	allocs := func(h http.Handler) float64 {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/pods/a", nil)
		w := httptest.NewRecorder()
		return testing.AllocsPerRun(200, func() { h.ServeHTTP(w, req) })
	}
	// The wrapper between adds no allocation of its own; only the copy
	// of the request it makes the deadline filter do.
	if d, b := allocs(direct), allocs(between); d != b-1 {
		t.Errorf("allocations per GET: %v handing the context over, %v with a handler between; want one less", d, b)
	}
}
