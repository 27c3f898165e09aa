package installer

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/server/metrics"
)

type testServer struct {
	srv *httptest.Server
	cms *cmStore
}

// startServer serves the core group-version (configmaps,
// configmaps/status, namespaces) through a real GenericServer's handler
// with the RequestInfo and warning filters, over TLS with HTTP/2.
func startServer(t *testing.T) *testServer {
	t.Helper()
	return startServerWithMetrics(t, nil)
}

// startServerWithMetrics is startServer recording watch events in m.
func startServerWithMetrics(t *testing.T, m *metrics.Metrics) *testServer {
	t.Helper()
	cms := newCMStore()
	cfg := server.NewConfig(slog.New(slog.DiscardHandler))
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *server.Config) http.Handler {
		h = filters.WithWarningRecorder(h, c.Logger)
		return filters.WithRequestInfo(h, request.NewResolver(), c.Logger)
	}
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := completed.New("test", server.NewEmptyDelegate(http.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	g := &APIGroupVersion{
		GroupVersion: schema.GroupVersion{Version: "v1"},
		Storage: map[string]kapirest.Storage{
			"configmaps":        cms,
			"configmaps/status": &statusStore{cms},
			"namespaces":        nsStore{},
		},
		MinRequestTimeout: 30 * time.Minute,
		Metrics:           m,
		Logger:            slog.New(slog.DiscardHandler),
	}
	if _, err := g.Install(s.Handler()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s.Handler())
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &testServer{srv: srv, cms: cms}
}

func (ts *testServer) config(protobuf bool) *rest.Config {
	cfg := &rest.Config{
		Host:            ts.srv.URL,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             -1,
	}
	if protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	return cfg
}

func (ts *testServer) clientset(t *testing.T, protobuf bool) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(ts.config(protobuf))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// httpClient returns a client speaking HTTP/2 (h2) or HTTP/1.1.
func (ts *testServer) httpClient(h2 bool) *http.Client {
	c := ts.srv.Client()
	if !h2 {
		tr := c.Transport.(*http.Transport).Clone()
		tr.ForceAttemptHTTP2 = false
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
		c = &http.Client{Transport: tr}
	}
	return c
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request; headers alternate name, value.
func (ts *testServer) do(t *testing.T, method, path string, body []byte, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: b}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
