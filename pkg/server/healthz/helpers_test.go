package healthz

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// mapMux is an exact-match mux, like the server's non-REST mux.
type mapMux map[string]http.Handler

func (m mapMux) Handle(pattern string, h http.Handler) {
	if _, dup := m[pattern]; dup {
		panic(fmt.Sprintf("duplicate pattern %q", pattern))
	}
	m[pattern] = h
}

func (m mapMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := m[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type response struct {
	code   int
	body   string
	header http.Header
}

func serve(t *testing.T, h http.Handler, method, target string) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return response{code: rec.Code, body: rec.Body.String(), header: rec.Result().Header}
}

func failing(name, msg string) HealthChecker {
	return NamedCheck(name, func(*http.Request) error { return errors.New(msg) })
}

func passing(name string) HealthChecker {
	return NamedCheck(name, func(*http.Request) error { return nil })
}

// counting returns a passing check and a function reporting how often it ran.
func counting(name string) (HealthChecker, func() int) {
	var mu sync.Mutex
	n := 0
	return NamedCheck(name, func(*http.Request) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			return nil
		}), func() int {
			mu.Lock()
			defer mu.Unlock()
			return n
		}
}

func install(t *testing.T, path string, opts HandlerOptions, checks ...HealthChecker) mapMux {
	t.Helper()
	mux := mapMux{}
	if opts.Logger == nil {
		opts.Logger = testLogger(io.Discard)
	}
	InstallPathHandler(mux, path, opts, checks...)
	return mux
}
