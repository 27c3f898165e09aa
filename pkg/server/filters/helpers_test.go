package filters

import (
	"bytes"
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// withInfo runs the real RequestInfo filter before h.
func withInfo(h http.Handler) http.Handler {
	return WithRequestInfo(h, request.NewResolver(), discard())
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

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

// tokenAuthenticator is a small real Authenticator: bearer tokens mapped to
// users.
type tokenAuthenticator map[string]*user.Info

func (a tokenAuthenticator) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, false, nil
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return nil, false, nil
	}
	u, ok := a[tok]
	if !ok {
		return nil, false, errInvalidToken
	}
	return u, true, nil
}

var errInvalidToken = &tokenError{}

type tokenError struct{}

func (*tokenError) Error() string { return "invalid bearer token" }

// protocols are the two wire protocols every end-to-end test runs on.
var protocols = []struct {
	name  string
	http2 bool
}{{"HTTP/1.1", false}, {"HTTP/2", true}}

// startTLS starts h on a TLS test server speaking HTTP/2 or only HTTP/1.1,
// and returns it with a client for it.
func startTLS(t *testing.T, h http.Handler, http2 bool) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = http2
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := srv.Client()
	if !http2 {
		tr := c.Transport.(*http.Transport).Clone()
		tr.ForceAttemptHTTP2 = false
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		c = &http.Client{Transport: tr}
	}
	return srv, c
}

func get(t *testing.T, c *http.Client, url string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp, string(body)
}
