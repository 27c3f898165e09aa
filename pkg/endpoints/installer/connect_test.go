package installer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// echoConnecter answers with the object's name, the request's path parts
// and method; the name "missing" is a 404, "broken" fails inside the
// handler (answered with fail).
type echoConnecter struct {
	methods []string
	subpath bool
}

func (c echoConnecter) ConnectSubpath() bool { return c.subpath }

func (echoConnecter) New() runtime.Object        { return &corev1.PodProxyOptions{} }
func (echoConnecter) Destroy()                   {}
func (c echoConnecter) ConnectMethods() []string { return c.methods }
func (echoConnecter) NamespaceScoped() bool      { return true }
func (c echoConnecter) Connect(ctx context.Context, name string, req *http.Request, fail kapirest.ErrorWriter) (http.Handler, error) {
	if name == "missing" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, name)
	}
	info, _ := request.RequestInfoFrom(ctx)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name == "broken" {
			fail(w, r, apierrors.NewBadRequest("broken inside"))
			return
		}
		fmt.Fprintf(w, "%s %s %v", r.Method, request.NamespaceFrom(ctx), info.Parts)
	}), nil
}

// TestConnectSubresources checks the routing of rest.Connecter
// subresources: their methods (405 otherwise), paths below them, errors
// before and while answering, and their verbs in discovery.
func TestConnectSubresources(t *testing.T) {
	cfg := server.NewConfig(slog.New(slog.DiscardHandler))
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *server.Config) http.Handler {
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
	cms := newCMStore()
	g := &APIGroupVersion{
		GroupVersion: schema.GroupVersion{Version: "v1"},
		Storage: map[string]kapirest.Storage{
			"configmaps":       cms,
			"configmaps/proxy": echoConnecter{methods: []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, subpath: true},
			"configmaps/log":   echoConnecter{methods: []string{"GET"}},
		},
		MinRequestTimeout: time.Minute,
		Logger:            slog.New(slog.DiscardHandler),
	}
	resources, err := g.Install(s.Handler())
	if err != nil {
		t.Fatal(err)
	}
	verbs := map[string][]string{}
	for _, r := range resources {
		verbs[r.Name] = r.Verbs
	}
	if got := verbs["configmaps/proxy"]; !slices.Equal(got, []string{"create", "delete", "get", "patch", "update"}) {
		t.Errorf("proxy verbs: got %v", got)
	}
	if got := verbs["configmaps/log"]; !slices.Equal(got, []string{"get"}) {
		t.Errorf("log verbs: got %v", got)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	ts := &testServer{srv: srv}

	base := "/api/v1/namespaces/ns1/configmaps/"
	for _, c := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", base + "a/proxy", 200, "GET ns1 [configmaps a proxy]"},
		{"POST", base + "a/proxy/x/y", 200, "POST ns1 [configmaps a proxy x y]"},
		{"DELETE", base + "a/proxy/", 200, "DELETE ns1 [configmaps a proxy]"},
		{"GET", base + "a/log", 200, "GET ns1 [configmaps a log]"},
		{"POST", base + "a/log", 405, "the server does not allow this method on the requested resource"},
		{"GET", base + "a/log/deeper", 404, "the server could not find the requested resource"},
		{"GET", base + "missing/log", 404, `things "missing" not found`},
		{"GET", base + "broken/log", 400, "broken inside"},
		{"GET", "/api/v1/configmaps/a/log", 404, "the server could not find the requested resource"},
	} {
		r := ts.do(t, c.method, c.path, nil)
		body := string(r.body)
		var st metav1.Status
		if json.Unmarshal(r.body, &st) == nil && st.Kind == "Status" {
			body = st.Message
		}
		if r.code != c.code || body != c.body {
			t.Errorf("%s %s: got %d %q, want %d %q", c.method, c.path, r.code, body, c.code, c.body)
		}
	}
}
