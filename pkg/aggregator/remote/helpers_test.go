package remote

import (
	"context"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/server"
)

const aggregatedV2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// backend is an aggregated API server over real TLS serving canned
// discovery and OpenAPI documents that a test may change at any time.
type backend struct {
	srv     *httptest.Server
	release chan struct{} // closed at cleanup: hanging requests return

	mu         sync.Mutex
	aggregated *apidiscoveryv2.APIGroupDiscoveryList // nil: /apis answers a legacy APIGroupList
	legacy     map[string]*metav1.APIResourceList    // by path
	v2         map[string]any                        // nil: 404
	v2ETag     bool                                  // send an ETag with /openapi/v2
	v3         map[string]any                        // gv path -> document; nil: 404
	status     int                                   // answer every request with it when set
	hang       bool
	requests   map[string]int // by path
	notMod     map[string]int // 304s by path
	identity   map[string]string
}

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{
		release:  make(chan struct{}),
		legacy:   map[string]*metav1.APIResourceList{},
		requests: map[string]int{},
		notMod:   map[string]int{},
		identity: map[string]string{},
	}
	b.srv = httptest.NewTLSServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	t.Cleanup(func() { close(b.release) })
	return b
}

func (b *backend) set(f func(b *backend)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b)
}

func (b *backend) count(path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests[path]
}

func (b *backend) notModified(path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.notMod[path]
}

// who returns "user/group,group" of the last request to path.
func (b *backend) who(path string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.identity[path]
}

func etagOf(body []byte) string {
	return fmt.Sprintf("%q", fmt.Sprintf("%X", sha512.Sum512(body))[:32])
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.requests[r.URL.Path]++
	b.identity[r.URL.Path] = r.Header.Get("X-Remote-User") + "/" + strings.Join(r.Header.Values("X-Remote-Group"), ",")
	hang, status := b.hang, b.status
	b.mu.Unlock()
	if hang {
		select {
		case <-r.Context().Done():
		case <-b.release:
		}
		return
	}
	if status != 0 {
		http.Error(w, "backend says no", status)
		return
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	write := func(contentType string, v any, withETag bool) {
		body, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		if withETag {
			etag := etagOf(body)
			w.Header().Set("Etag", etag)
			if r.Header.Get("If-None-Match") == etag {
				b.notMod[r.URL.Path]++
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}
	p := r.URL.Path
	switch {
	case p == "/apis":
		if b.aggregated != nil && strings.Contains(r.Header.Get("Accept"), "g=apidiscovery.k8s.io;v=v2;") {
			write(aggregatedV2, b.aggregated, true)
			return
		}
		write("application/json", &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}, false)
	case b.legacy[p] != nil:
		write("application/json", b.legacy[p], false)
	case p == "/openapi/v2" && b.v2 != nil:
		write("application/json", b.v2, b.v2ETag)
	case p == "/openapi/v3" && b.v3 != nil:
		paths := map[string]any{}
		for k, doc := range b.v3 {
			body, _ := json.Marshal(doc)
			paths[k] = map[string]string{"serverRelativeURL": "/openapi/v3/" + k + "?hash=" + strings.Trim(etagOf(body), `"`)}
		}
		write("application/json", map[string]any{"paths": paths}, true)
	case strings.HasPrefix(p, "/openapi/v3/") && b.v3 != nil && b.v3[strings.TrimPrefix(p, "/openapi/v3/")] != nil:
		write("application/json", b.v3[strings.TrimPrefix(p, "/openapi/v3/")], false)
	default:
		http.NotFound(w, r)
	}
}

// targets resolves APIServices by name to test backends.
type targets struct {
	mu sync.Mutex
	m  map[string]*backend
}

func newTargets(m map[string]*backend) *targets { return &targets{m: m} }

func (ts *targets) Target(_ context.Context, svc *apiregistrationv1.APIService) (*url.URL, http.RoundTripper, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	b := ts.m[svc.Name]
	if b == nil {
		return nil, nil, errors.New("no endpoints")
	}
	u, err := url.Parse(b.srv.URL)
	if err != nil {
		return nil, nil, err
	}
	return u, b.srv.Client().Transport, nil
}

// head is the head of a chain: its discovery and OpenAPI served over HTTP.
type head struct {
	disco *discovery.Manager
	oa    *server.OpenAPI
	url   string
}

func newHead(t *testing.T) *head {
	t.Helper()
	m, err := discovery.New(discovery.Config{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.NewConfig(testLogger(t))
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	gs, err := completed.New("kube-aggregator", server.NewEmptyDelegate(http.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	oa := server.NewOpenAPI("Kubernetes", "v1.0.0")
	gs.SetOpenAPI(oa)
	m.Install(gs.Handler().NonRESTMux)
	gs.PrepareRun()
	srv := httptest.NewServer(gs.Handler().FullHandlerChain)
	t.Cleanup(srv.Close)
	return &head{disco: m, oa: oa, url: srv.URL}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (h *head) get(t *testing.T, path, accept string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// legacyGroups returns the groups of /apis in order, each as
// "<group>:<version>,<version>".
func (h *head) legacyGroups(t *testing.T) []string {
	t.Helper()
	code, body := h.get(t, "/apis", "application/json")
	if code != http.StatusOK {
		t.Fatalf("GET /apis: got %d, want 200: %s", code, body)
	}
	var list metav1.APIGroupList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range list.Groups {
		var vs []string
		for _, v := range g.Versions {
			vs = append(vs, v.Version)
		}
		out = append(out, g.Name+":"+strings.Join(vs, ","))
	}
	return out
}

func (h *head) aggregated(t *testing.T) *apidiscoveryv2.APIGroupDiscoveryList {
	t.Helper()
	code, body := h.get(t, "/apis", aggregatedV2)
	if code != http.StatusOK {
		t.Fatalf("GET /apis: got %d, want 200: %s", code, body)
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "APIGroupDiscoveryList" {
		t.Fatalf("GET /apis: got kind %q, want APIGroupDiscoveryList", list.Kind)
	}
	return &list
}

// version returns group/version from the aggregated discovery, nil if
// absent.
func (h *head) version(t *testing.T, group, version string) *apidiscoveryv2.APIVersionDiscovery {
	t.Helper()
	for _, g := range h.aggregated(t).Items {
		if g.Name != group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == version {
				return &v
			}
		}
	}
	return nil
}

// v2 returns the sorted path and definition names of /openapi/v2, and the
// definitions.
func (h *head) v2(t *testing.T) (paths, defs []string, definitions map[string]json.RawMessage) {
	t.Helper()
	code, body := h.get(t, "/openapi/v2", "application/json")
	if code != http.StatusOK {
		t.Fatalf("GET /openapi/v2: got %d, want 200", code)
	}
	var doc struct {
		Paths       map[string]json.RawMessage `json:"paths"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return sortedKeys(doc.Paths), sortedKeys(doc.Definitions), doc.Definitions
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// eventually polls cond until it returns "" or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	testwait.For(t, timeout, 20*time.Millisecond, "condition", func() error {
		if msg := cond(); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
}

// run starts c and stops it at cleanup, waiting for Run to return.
func run(t *testing.T, c *Controller) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func apiService(group, version string, groupPriority, versionPriority int32, available bool) *apiregistrationv1.APIService {
	status := apiregistrationv1.ConditionTrue
	if !available {
		status = apiregistrationv1.ConditionFalse
	}
	port := int32(443)
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: version + "." + group},
		Spec: apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api", Port: &port},
			Group:                group,
			Version:              version,
			GroupPriorityMinimum: groupPriority,
			VersionPriority:      versionPriority,
		},
		Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{
			{Type: apiregistrationv1.Available, Status: status},
		}},
	}
}

// Canned documents of a wardle-like backend.

var crud = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func wardleResources(extra ...string) []apidiscoveryv2.APIResourceDiscovery {
	rs := []apidiscoveryv2.APIResourceDiscovery{
		{
			Resource:         "flunders",
			ResponseKind:     &metav1.GroupVersionKind{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Flunder"},
			Scope:            apidiscoveryv2.ScopeNamespace,
			SingularResource: "flunder",
			Verbs:            crud,
			ShortNames:       []string{"fl"},
			Categories:       []string{"all"},
			Subresources: []apidiscoveryv2.APISubresourceDiscovery{{
				Subresource:  "status",
				ResponseKind: &metav1.GroupVersionKind{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Flunder"},
				Verbs:        []string{"get", "patch", "update"},
			}},
		},
		{
			Resource:         "fischers",
			ResponseKind:     &metav1.GroupVersionKind{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Fischer"},
			Scope:            apidiscoveryv2.ScopeCluster,
			SingularResource: "fischer",
			Verbs:            crud,
		},
	}
	for _, name := range extra {
		rs = append(rs, apidiscoveryv2.APIResourceDiscovery{
			Resource:     name,
			ResponseKind: &metav1.GroupVersionKind{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Extra"},
			Scope:        apidiscoveryv2.ScopeCluster,
			Verbs:        []string{"get"},
		})
	}
	return rs
}

func aggregatedList(groups ...apidiscoveryv2.APIGroupDiscovery) *apidiscoveryv2.APIGroupDiscoveryList {
	return &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    groups,
	}
}

func group(name, version string, rs []apidiscoveryv2.APIResourceDiscovery) apidiscoveryv2.APIGroupDiscovery {
	return apidiscoveryv2.APIGroupDiscovery{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Versions:   []apidiscoveryv2.APIVersionDiscovery{{Version: version, Resources: rs, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}},
	}
}

// wardleV2 is a backend's /openapi/v2: paths of its group-version and of
// others, definitions referenced directly, transitively, not at all, and
// one named like Kubernetes' own.
func wardleV2(flunderDescription string) map[string]any {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/definitions/" + name} }
	return map[string]any{
		"swagger": "2.0",
		"paths": map[string]any{
			"/apis/wardle.example.com/v1alpha1/": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{"schema": ref("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList")}}}},
			"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders": map[string]any{
				"get": map[string]any{"responses": map[string]any{"200": map[string]any{"schema": ref("com.example.wardle.v1alpha1.FlunderList")}}},
			},
			"/apis/wardle.example.com/v1alpha1beta/x": map[string]any{"get": map[string]any{}},
			"/apis/wardle.example.com/":               map[string]any{"get": map[string]any{}},
			"/version/":                               map[string]any{"get": map[string]any{}},
		},
		"definitions": map[string]any{
			"com.example.wardle.v1alpha1.FlunderList": map[string]any{"properties": map[string]any{
				"items":    map[string]any{"type": "array", "items": ref("com.example.wardle.v1alpha1.Flunder")},
				"metadata": ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"),
			}},
			"com.example.wardle.v1alpha1.Flunder": map[string]any{"description": flunderDescription, "properties": map[string]any{
				"spec":    ref("com.example.wardle.v1alpha1.FlunderSpec"),
				"maxSize": map[string]any{"type": "integer", "maximum": json.Number("9223372036854775807")},
			}},
			"com.example.wardle.v1alpha1.FlunderSpec":       map[string]any{"type": "object"},
			"com.example.wardle.v1alpha1.Unused":            map[string]any{"type": "object"},
			"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta": map[string]any{"description": "the backend's copy"},
		},
	}
}

func wardleV3(title string) map[string]any {
	return map[string]any{"openapi": "3.0.0", "info": map[string]any{"title": title, "version": "v1"}, "paths": map[string]any{}}
}
