package apiextensions

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
	kapidiscovery "github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// testServer is an apiextensions server alone (it is its own head: it
// serves discovery and OpenAPI), on a memory backend, with the RequestInfo
// and warning filters, served over TLS.
type testServer struct {
	s       *server.GenericServer
	srv     *httptest.Server
	backend *memory.Backend
	api     *server.OpenAPI
	stop    chan struct{}
}

type serverOptions struct {
	backend *memory.Backend // shared across restarts; nil: a new one
	// noWait returns as soon as the server serves, without waiting for
	// the CRDs stored at start to be served.
	noWait bool
}

func startServer(t testing.TB, o serverOptions) *testServer {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	b := o.backend
	if b == nil {
		b = memory.NewBackend(memory.BackendConfig{})
		t.Cleanup(func() { _ = b.Close() })
	}
	cfg := server.NewConfig(logger)
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *server.Config) http.Handler {
		h = filters.WithWarningRecorder(h, c.Logger)
		return filters.WithRequestInfo(h, request.NewResolver(), c.Logger)
	}
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := completed.New("apiextensions-apiserver", server.NewEmptyDelegate(server.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	disc, err := kapidiscovery.New(kapidiscovery.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	api := server.NewOpenAPI("Kubernetes", "test")
	s.SetOpenAPI(api)
	if err := Install(s, Config{
		Storage:           generic.MemoryStorage(b),
		Discovery:         disc,
		OpenAPI:           api,
		MinRequestTimeout: time.Minute,
		Resync:            time.Second,
		Logger:            logger,
	}); err != nil {
		t.Fatal(err)
	}
	disc.Install(s.Handler().NonRESTMux)
	ts := &testServer{s: s, backend: b, api: api, stop: make(chan struct{})}
	ts.srv = httptest.NewUnstartedServer(s.Handler())
	ts.srv.EnableHTTP2 = true
	ts.srv.StartTLS()
	if _, _, err := s.PrepareRun().NonBlockingRun(ts.stop, time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.close)
	if o.noWait {
		return ts
	}
	select {
	case <-s.MuxAndDiscoveryCompleteSignals()[CRDInformerSyncedSignal]:
	case <-time.After(waitTimeout):
		t.Fatalf("CRDInformerHasNotSynced not closed within %v", waitTimeout)
	}
	return ts
}

// close stops the server (its controller) and releases it; idempotent.
func (ts *testServer) close() {
	select {
	case <-ts.stop:
		return
	default:
	}
	ts.srv.Close()
	close(ts.stop)
	ts.s.Destroy()
}

func (ts *testServer) config() *rest.Config {
	return &rest.Config{Host: ts.srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1}
}

func (ts *testServer) crdClient(t *testing.T) apiextensionsclient.Interface {
	t.Helper()
	c, err := apiextensionsclient.NewForConfig(ts.config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (ts *testServer) dynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(ts.config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (ts *testServer) discovery(t *testing.T) discovery.DiscoveryInterface {
	t.Helper()
	c, err := discovery.NewDiscoveryClientForConfig(ts.config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitTimeout bounds the waits of these tests for what the controller
// does in the background: generous, since the machine may be loaded
// (the waits end as soon as their condition holds).
const waitTimeout = 30 * time.Second

// waitEstablished waits, at most waitTimeout, for crd to be Established
// and returns it.
func waitEstablished(t *testing.T, c apiextensionsclient.Interface, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && isConditionTrue(crd, apiextensionsv1.Established) {
			return crd
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not established within %v: %v %+v", name, waitTimeout, err, crd)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventually polls cond every 10ms until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, within, 10*time.Millisecond, what, cond)
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// serveWidgets creates the namespaced widgets.example.com CRD of
// crdtest.NewCRD, waits until it is established, and returns its v1
// resource in namespace "ns".
func serveWidgets(t *testing.T, ts *testServer) dynamic.ResourceInterface {
	t.Helper()
	crd, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	return ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns")
}
