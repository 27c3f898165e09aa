package handlers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// sharingGetter gets obj as a watch cache does: when the read asks for
// the shared object (cacheable.WithItem) it hands over one shared Object
// (the same on every get) and leaves the object it returns empty; else it
// returns a deep copy.
type sharingGetter struct {
	obj    runtime.Object
	shared *cacheable.Object
	asked  int  // reads that asked for the shared object
	first  bool // every read hands out a new shared object (its first GET)
}

func (g *sharingGetter) New() runtime.Object {
	if _, ok := g.obj.(*unstructured.Unstructured); ok {
		return &unstructured.Unstructured{}
	}
	return reflect.New(reflect.TypeOf(g.obj).Elem()).Interface().(runtime.Object)
}

func (g *sharingGetter) Get(ctx context.Context, _ string, _ *metav1.GetOptions) (runtime.Object, error) {
	if it := cacheable.ItemWanted(ctx); it != nil {
		g.asked++
		if g.shared == nil || g.first {
			g.shared = cacheable.New(g.obj)
		}
		it.Set(g.shared)
		return g.New(), nil
	}
	return g.obj.DeepCopyObject(), nil
}

// TestSharedGetBytes compares GET responses written from the shared
// object's kept encoding (the watch cache's encode-once path) with the
// same object encoded from a copy (the path every other GET takes): same
// status, headers and bytes, for built-in and custom resources, small and
// gzipped (over 128 KiB) objects, JSON, YAML and protobuf, twice (the
// second from the kept encoding).
func TestSharedGetBytes(t *testing.T) {
	for _, tc := range listCases() {
		for _, big := range []bool{false, true} {
			for _, accept := range []struct{ accept, encoding string }{
				{"application/json", ""},
				{"application/json", "gzip"},
				{"", "gzip, deflate"},
				{"application/json;q=0.9,application/yaml;q=0.1", "gzip"},
				{"application/yaml", ""},
				{"application/vnd.kubernetes.protobuf, application/json", "gzip"},
				{"application/vnd.kubernetes.protobuf", ""}, // 406 for custom resources
			} {
				name := fmt.Sprintf("%s/big=%v/%q/%q", tc.name, big, accept.accept, accept.encoding)
				obj := tc.lister(1, metav1.ListMeta{}).objs[0]
				if big {
					setPadding(t, obj, strings.Repeat("z", 200<<10))
				}
				g := &sharingGetter{obj: obj}
				whole := serveGet(t, tc.scope(false), g, accept.accept, accept.encoding, "", "kapi-test")
				if g.asked != 0 {
					t.Fatalf("%s: a scope without SharedGetObjects asked for the shared object", name)
				}
				for round := range 2 {
					got := serveGet(t, sharedGetScope(tc), g, accept.accept, accept.encoding, "", "kapi-test")
					if whole.code == http.StatusOK && g.asked != round+1 {
						t.Fatalf("%s: shared object not asked for (%d)", name, g.asked)
					}
					if big && whole.code == http.StatusOK && (whole.encoding != "gzip") != (accept.encoding == "") {
						t.Fatalf("%s: gzip not exercised: %q", name, whole.encoding)
					}
					compareResponses(t, name, got, whole)
				}
			}
		}
	}
}

// TestSharedGetNotForTransformations: requests the shared path does not
// serve ask for no shared object and get what they got before.
func TestSharedGetNotForTransformations(t *testing.T) {
	for _, tc := range listCases() {
		for _, r := range []struct{ accept, query, ua string }{
			{"application/json", "pretty=true", ""},
			{"application/json", "", "curl/8.0"},
			{"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", "", ""},
		} {
			g := &sharingGetter{obj: tc.lister(1, metav1.ListMeta{}).objs[0]}
			got := serveGet(t, sharedGetScope(tc), g, r.accept, "", r.query, r.ua)
			want := serveGet(t, tc.scope(false), g, r.accept, "", r.query, r.ua)
			if g.asked != 0 {
				t.Errorf("%s %+v: shared object asked for", tc.name, r)
			}
			if want.code != http.StatusOK {
				t.Errorf("%s %+v: status %d: %s", tc.name, r, want.code, want.body)
			}
			compareResponses(t, fmt.Sprintf("%s %+v", tc.name, r), got, want)
		}
	}
}

// TestSharedGetEncodesOnce: the second GET of the same shared object
// writes the kept bytes, not a new encoding: the test changes the object
// behind the shared one (which a watch cache never does) and the shared
// GET still answers the first encoding, a GET of a copy the new one.
func TestSharedGetEncodesOnce(t *testing.T) {
	for _, tc := range listCases() {
		obj := tc.lister(1, metav1.ListMeta{}).objs[0]
		g := &sharingGetter{obj: obj}
		s := sharedGetScope(tc)
		first := serveGet(t, s, g, "application/json", "", "", "kapi-test")
		setPadding(t, obj, "changed behind the cache's back")
		again := serveGet(t, s, g, "application/json", "", "", "kapi-test")
		compareResponses(t, tc.name+" kept", again, first)
		fresh := serveGet(t, tc.scope(false), g, "application/json", "", "", "kapi-test")
		if !strings.Contains(string(fresh.body), "changed behind") || strings.Contains(string(again.body), "changed behind") {
			t.Errorf("%s: shared GET did not answer its kept encoding:\n%s\n%s", tc.name, again.body, fresh.body)
		}
	}
}

func sharedGetScope(tc listCase) *handlers.RequestScope {
	s := tc.scope(false)
	s.SharedGetObjects = true
	return s
}

func setPadding(t *testing.T, obj runtime.Object, pad string) {
	t.Helper()
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if err := unstructured.SetNestedField(o.Object, pad, "spec", "pad"); err != nil {
			t.Fatal(err)
		}
	case *corev1.ConfigMap:
		o.Data["pad"] = pad
	default:
		t.Fatalf("unexpected %T", obj)
	}
}

func serveGet(t *testing.T, s *handlers.RequestScope, g *sharingGetter, accept, encoding, query, ua string) listResponse {
	t.Helper()
	target := "/apis/x/v1/namespaces/ns/things/" + "one"
	if query != "" {
		target += "?" + query
	}
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	req.Header.Set("User-Agent", ua)
	req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
		IsResourceRequest: true, Verb: "get", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version,
		Namespace: "ns", Resource: s.Resource.Resource, Name: "one",
	}))
	rec := httptest.NewRecorder()
	handlers.GetResource(g, s).ServeHTTP(rec, req)
	out := listResponse{code: rec.Code, ctype: rec.Header().Get("Content-Type"), encoding: rec.Header().Get("Content-Encoding"), body: rec.Body.Bytes()}
	if out.encoding == "gzip" {
		out.compressed = out.body
		zr, err := gzip.NewReader(bytes.NewReader(out.body))
		if err != nil {
			t.Fatal(err)
		}
		if out.body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type nopAuditBackend struct{}

func (nopAuditBackend) ProcessEvents(...*audit.Event) bool { return true }
func (nopAuditBackend) Run(<-chan struct{}) error          { return nil }
func (nopAuditBackend) Shutdown()                          {}

// TestSharedGetAudit: a GET whose audit event records the response object
// (level RequestResponse) takes no shared object and records the object;
// at level Metadata it takes the shared object.
func TestSharedGetAudit(t *testing.T) {
	for _, tc := range []struct {
		level  audit.Level
		shared bool
	}{{audit.LevelRequestResponse, false}, {audit.LevelRequest, true}, {audit.LevelMetadata, true}} {
		lc := listCases()[1]
		g := &sharingGetter{obj: lc.lister(1, metav1.ListMeta{}).objs[0]}
		s := sharedGetScope(lc)
		req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/namespaces/ns/things/one", nil)
		req.Header.Set("Accept", "application/json")
		ctx := audit.WithContext(req.Context())
		ev := &audit.Event{}
		audit.FromContext(ctx).Begin(ev, audit.Policy{Level: tc.level}, nopAuditBackend{}, nil)
		ctx = request.WithRequestInfo(ctx, &request.RequestInfo{
			IsResourceRequest: true, Verb: "get", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version,
			Namespace: "ns", Resource: s.Resource.Resource, Name: "one",
		})
		rec := httptest.NewRecorder()
		handlers.GetResource(g, s).ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tc.level, rec.Code, rec.Body)
		}
		if got := g.asked == 1; got != tc.shared {
			t.Errorf("%s: shared object asked for: %v, want %v", tc.level, got, tc.shared)
		}
		if recorded := ev.ResponseObject != nil; recorded != !tc.shared {
			t.Errorf("%s: response object recorded: %v", tc.level, recorded)
		}
	}
}

// BenchmarkGetResponse serves a GET of a custom resource (~600 bytes of
// JSON) through GetResource from a getter that acts as the watch cache:
// "copy" is a scope without SharedGetObjects (a deep copy encoded per
// request, as before), "kept" one with it (the entry's kept encoding),
// "kept-first" the first GET of an entry (its encoding made and kept: the
// only kind of GET kapi-bench's get row makes, one per object).
func BenchmarkGetResponse(b *testing.B) {
	lc := listCases()[1]
	for _, mode := range []string{"copy", "kept", "kept-first"} {
		s := lc.scope(false)
		if mode != "copy" {
			s = sharedGetScope(lc)
		}
		b.Run(mode, func(b *testing.B) {
			g := &sharingGetter{obj: lc.lister(1, metav1.ListMeta{}).objs[0], first: mode == "kept-first"}
			h := handlers.GetResource(g, s)
			req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/namespaces/ns/things/one", nil)
			req.Header.Set("Accept", "application/json, */*")
			req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
				IsResourceRequest: true, Verb: "get", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version,
				Namespace: "ns", Resource: s.Resource.Resource, Name: "one",
			}))
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
