package apiextensions

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
	kapidiscovery "github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// newTestCRServer is a crServer on its own server (RequestInfo filter,
// memory storage, no OpenAPI), served over HTTP.
func newTestCRServer(t *testing.T) (*crServer, *httptest.Server) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	cfg := server.NewConfig(logger)
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *server.Config) http.Handler {
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
	crs := &crServer{
		handler:     s.Handler(),
		storage:     generic.MemoryStorage(b),
		discovery:   disc,
		logger:      logger,
		serializer:  customresource.NewSerializer(),
		crds:        map[string]*crdServing{},
		metaSchemas: func() (map[string]*spec.Schema, error) { return nil, nil },
	}
	t.Cleanup(crs.closeAll)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return crs, srv
}

// established returns crd as the controller makes it before writing its
// status: names accepted, Established.
func established(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	crd = crd.DeepCopy()
	crd.UID = types.UID("uid-" + crd.Name)
	acceptNames(crd, nil)
	return crd
}

// heldGet starts a GET of path and returns its status code channel.
func heldGet(t *testing.T, srv *httptest.Server, path string) <-chan int {
	t.Helper()
	out := make(chan int, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			out <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		out <- resp.StatusCode
	}()
	return out
}

// TestHeldRequests checks the gate between hold and activate or
// discard: requests for the staged resources wait (under a new root and
// under a served one), then get what is served afterwards.
func TestHeldRequests(t *testing.T) {
	crs, srv := newTestCRServer(t)
	widgets := established(crdtest.NewCRD("held.example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped))
	gadgets := established(crdtest.NewCRD("held.example.com", "gadgets", "Gadget", apiextensionsv1.NamespaceScoped))
	gadgets.Spec.Names.ShortNames, gadgets.Status.AcceptedNames.ShortNames = nil, nil
	const widgetsPath = "/apis/held.example.com/v1/namespaces/ns/widgets"
	const gadgetsPath = "/apis/held.example.com/v1/namespaces/ns/gadgets"

	stageHeld := func(crd *apiextensionsv1.CustomResourceDefinition) *staged {
		t.Helper()
		p, err := crs.prepare(crd)
		if err != nil {
			t.Fatal(err)
		}
		st, err := crs.stage(p)
		if err != nil {
			t.Fatal(err)
		}
		crs.hold(st)
		return st
	}
	waitHeld := func(codes <-chan int) {
		t.Helper()
		select {
		case code := <-codes:
			t.Fatalf("got %d while the change is held, want the request to wait", code)
		case <-time.After(200 * time.Millisecond):
		}
	}
	result := func(codes <-chan int) int {
		t.Helper()
		select {
		case code := <-codes:
			return code
		case <-time.After(waitTimeout):
			t.Fatal("a held request did not go on")
			return 0
		}
	}

	// A new root, dropped: the request waits, then 404; the root goes.
	st := stageHeld(widgets)
	codes := heldGet(t, srv, widgetsPath)
	waitHeld(codes)
	crs.discard(st)
	if code := result(codes); code != http.StatusNotFound {
		t.Fatalf("after discard: got %d, want 404", code)
	}
	if slices.Contains(crs.handler.RESTRoots(), "/apis/held.example.com/v1") {
		t.Fatal("the held root stayed after discard")
	}

	// A new root, shown: the request waits, then 200.
	st = stageHeld(widgets)
	codes = heldGet(t, srv, widgetsPath)
	waitHeld(codes)
	if err := crs.activate(st); err != nil {
		t.Fatal(err)
	}
	if code := result(codes); code != http.StatusOK {
		t.Fatalf("after activate: got %d, want 200", code)
	}

	// A resource added to a served root: only its requests wait.
	st = stageHeld(gadgets)
	codes = heldGet(t, srv, gadgetsPath)
	if code := result(heldGet(t, srv, widgetsPath)); code != http.StatusOK {
		t.Fatalf("a served resource during a hold: got %d, want 200", code)
	}
	waitHeld(codes)
	if err := crs.activate(st); err != nil {
		t.Fatal(err)
	}
	if code := result(codes); code != http.StatusOK {
		t.Fatalf("after activate: got %d, want 200", code)
	}

	// Once shown, nothing waits; a change staged against an older state
	// is refused, not shown.
	var wg sync.WaitGroup
	for _, path := range []string{widgetsPath, gadgetsPath} {
		wg.Go(func() {
			if code := result(heldGet(t, srv, path)); code != http.StatusOK {
				t.Errorf("GET %s: %d", path, code)
			}
		})
	}
	wg.Wait()
	stale, err := crs.stage(crs.unserve(widgets.Name))
	if err != nil {
		t.Fatal(err)
	}
	if err := crs.remove(gadgets.Name); err != nil {
		t.Fatal(err)
	}
	if err := crs.activate(stale); err == nil {
		t.Fatal("got no error activating a stale change")
	}
	if code := result(heldGet(t, srv, widgetsPath)); code != http.StatusOK {
		t.Fatalf("widgets after a refused stale change: got %d, want 200", code)
	}
}
