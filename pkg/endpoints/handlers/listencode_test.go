package handlers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// sharingLister lists objs as a watch cache does: when the read asks for
// shared items (cacheable.WithItems) it hands over shared Objects (the
// same ones on every list) and returns the list's metadata only; else it
// returns deep copies in the list.
type sharingLister struct {
	newList func() runtime.Object
	objs    []runtime.Object
	shared  []*cacheable.Object
	meta    metav1.ListMeta
	asked   int // reads that asked for shared items
}

func (l *sharingLister) NewList() runtime.Object { return l.newList() }

func (l *sharingLister) ConvertToTable(context.Context, runtime.Object, runtime.Object) (*metav1.Table, error) {
	return nil, errors.New("no tables here")
}

func (l *sharingLister) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	list := l.newList()
	m, _ := meta.ListAccessor(list)
	m.SetResourceVersion(l.meta.ResourceVersion)
	m.SetContinue(l.meta.Continue)
	m.SetRemainingItemCount(l.meta.RemainingItemCount)
	if items := cacheable.ItemsWanted(ctx); items != nil {
		l.asked++
		if l.shared == nil {
			for _, o := range l.objs {
				l.shared = append(l.shared, cacheable.New(o))
			}
		}
		items.Set(l.shared)
		return list, nil
	}
	copies := make([]runtime.Object, len(l.objs))
	for i, o := range l.objs {
		copies[i] = o.DeepCopyObject()
	}
	return list, meta.SetList(list, copies)
}

// listCase is one resource whose lists are compared.
type listCase struct {
	name   string
	scope  func(shared bool) *handlers.RequestScope
	lister func(n int, lm metav1.ListMeta) *sharingLister
}

var cmGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

var crGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func listCases() []listCase {
	return []listCase{
		{
			name: "configmaps",
			scope: func(shared bool) *handlers.RequestScope {
				return &handlers.RequestScope{
					Serializer: scheme.Codecs, ParameterCodec: scheme.ParameterCodec, Convertor: scheme.Scheme,
					Kind: cmGVK, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespaced: true,
					SharedListObjects: shared,
				}
			},
			lister: func(n int, lm metav1.ListMeta) *sharingLister {
				l := &sharingLister{newList: func() runtime.Object { return &corev1.ConfigMapList{} }, meta: lm}
				for i := range n {
					l.objs = append(l.objs, &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%05d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(100 + i),
							Labels:        map[string]string{"i": fmt.Sprint(i)},
							ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}}},
						Data: map[string]string{"html": "<a href=\"x\">&amp;</a>", "unicode": "ünïcødé \u2028 \t", "pad": strings.Repeat("x", 300)},
					})
				}
				return l
			},
		},
		{
			name: "custom resources",
			scope: func(shared bool) *handlers.RequestScope {
				return &handlers.RequestScope{
					Serializer: customresource.NewSerializer(), ParameterCodec: scheme.ParameterCodec, Convertor: scheme.Scheme,
					Kind: crGVK, Resource: crGVK.GroupVersion().WithResource("widgets"), Namespaced: true,
					SharedListObjects: shared,
				}
			},
			lister: func(n int, lm metav1.ListMeta) *sharingLister {
				newList := func() runtime.Object {
					u := &unstructured.UnstructuredList{}
					u.SetGroupVersionKind(crGVK.GroupVersion().WithKind("WidgetList"))
					return u
				}
				l := &sharingLister{newList: newList, meta: lm}
				for i := range n {
					l.objs = append(l.objs, &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "example.com/v1", "kind": "Widget",
						"metadata": map[string]any{"name": fmt.Sprintf("w%05d", i), "namespace": "ns", "resourceVersion": fmt.Sprint(100 + i),
							"labels": map[string]any{"i": fmt.Sprint(i)}},
						"spec": map[string]any{"n": int64(i) << 40, "f": 1.5, "html": "<b>&</b>", "unicode": "ünïcødé \u2028",
							"list": []any{"a", int64(1), true, nil, map[string]any{"z": "y", "a": "b"}}, "pad": strings.Repeat("y", 300)},
					}})
				}
				return l
			},
		},
	}
}

// TestSharedListBytes compares list responses written from shared items
// (the watch cache's encode-once path) with the same lists encoded whole
// (the path every other list takes): same status, headers and bytes, for
// built-in and custom resources, empty, small and gzipped (over 128 KiB)
// lists, with and without a continue token and remaining count, twice
// (the second from the items' kept encodings). Pretty, YAML, protobuf,
// Table and PartialObjectMetadataList requests do not take shared items.
func TestSharedListBytes(t *testing.T) {
	remaining := int64(42)
	for _, tc := range listCases() {
		for _, n := range []int{0, 1, 3, 1000} {
			for _, lm := range []metav1.ListMeta{{ResourceVersion: "12345"}, {ResourceVersion: "777", Continue: "abc==", RemainingItemCount: &remaining}} {
				for _, accept := range []struct{ accept, encoding string }{
					{"application/json", ""},
					{"application/json", "gzip"},
					{"", "gzip, deflate"},
					{"application/json;q=0.9,application/yaml;q=0.1", "gzip"},
				} {
					name := fmt.Sprintf("%s/%d/%s/%q/%q", tc.name, n, lm.ResourceVersion, accept.accept, accept.encoding)
					l := tc.lister(n, lm)
					whole := serveList(t, tc.scope(false), l, accept.accept, accept.encoding, "")
					if l.asked != 0 {
						t.Fatalf("%s: a scope without SharedListObjects asked for shared items", name)
					}
					for round := range 2 {
						got := serveList(t, tc.scope(true), l, accept.accept, accept.encoding, "")
						if l.asked != round+1 {
							t.Fatalf("%s: shared items not asked for", name)
						}
						if whole.code != http.StatusOK {
							t.Fatalf("%s: status %d: %s", name, whole.code, whole.body)
						}
						compareResponses(t, name, got, whole)
					}
				}
			}
		}
	}
}

// TestSharedListNotForTransformations: requests the shared path does not
// serve ask for no shared items and get what they got before.
func TestSharedListNotForTransformations(t *testing.T) {
	for _, tc := range listCases() {
		for _, r := range []struct{ accept, query, ua string }{
			{"application/yaml", "", ""},
			{"application/json", "pretty=true", ""},
			{"application/json", "", "curl/8.0"},
			{"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", "", ""},
			{"application/vnd.kubernetes.protobuf", "", ""}, // 406 for custom resources
		} {
			l := tc.lister(3, metav1.ListMeta{ResourceVersion: "5"})
			got := serveListUA(t, tc.scope(true), l, r.accept, "", r.query, r.ua)
			want := serveListUA(t, tc.scope(false), l, r.accept, "", r.query, r.ua)
			if l.asked != 0 {
				t.Errorf("%s %+v: shared items asked for", tc.name, r)
			}
			compareResponses(t, fmt.Sprintf("%s %+v", tc.name, r), got, want)
		}
	}
}

type listResponse struct {
	code             int
	ctype, encoding  string
	body, compressed []byte
}

func serveList(t *testing.T, s *handlers.RequestScope, l *sharingLister, accept, encoding, query string) listResponse {
	return serveListUA(t, s, l, accept, encoding, query, "kapi-test")
}

func serveListUA(t *testing.T, s *handlers.RequestScope, l *sharingLister, accept, encoding, query, ua string) listResponse {
	t.Helper()
	target := "/apis/x/v1/namespaces/ns/things"
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
		IsResourceRequest: true, Verb: "list", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version,
		Namespace: "ns", Resource: s.Resource.Resource,
	}))
	rec := httptest.NewRecorder()
	handlers.ListResource(l, nil, s).ServeHTTP(rec, req)
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

func compareResponses(t *testing.T, name string, got, want listResponse) {
	t.Helper()
	if got.code != want.code || got.ctype != want.ctype || got.encoding != want.encoding {
		t.Errorf("%s: got %d %q %q, want %d %q %q", name, got.code, got.ctype, got.encoding, want.code, want.ctype, want.encoding)
	}
	if !bytes.Equal(got.body, want.body) {
		i := 0
		for i < len(got.body) && i < len(want.body) && got.body[i] == want.body[i] {
			i++
		}
		t.Errorf("%s: bodies differ at byte %d of %d/%d:\n got ...%s\nwant ...%s", name, i, len(got.body), len(want.body),
			excerpt(got.body, i), excerpt(want.body, i))
	}
}

func excerpt(b []byte, i int) string {
	lo, hi := max(0, i-60), min(len(b), i+60)
	return string(b[lo:hi])
}

// BenchmarkListResponse writes a list of 2,000 custom resources of ~400
// bytes (kapi-bench's list row) and of 2,000 ConfigMaps through
// ListResource, gzipped (what client-go asks for) and not: "whole" encodes
// the list from deep copies (every list before, and every list not served
// from the watch cache), "cold" from shared items with no kept encodings
// (a list's first read of fresh entries), "warm" from kept encodings.
//
//	go test -run '^$' -bench BenchmarkListResponse -benchmem ./pkg/endpoints/handlers/
func BenchmarkListResponse(b *testing.B) {
	for _, tc := range listCases() {
		for _, encoding := range []string{"gzip", "identity"} {
			for _, mode := range []string{"whole", "cold", "warm"} {
				b.Run(fmt.Sprintf("%s/%s/%s", strings.ReplaceAll(tc.name, " ", "-"), encoding, mode), func(b *testing.B) {
					l := benchLister(tc, 2000)
					s := tc.scope(mode != "whole")
					req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/namespaces/ns/things", nil)
					req.Header.Set("Accept", "application/json")
					req.Header.Set("Accept-Encoding", encoding)
					req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
						IsResourceRequest: true, Verb: "list", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version, Namespace: "ns", Resource: s.Resource.Resource,
					}))
					h := handlers.ListResource(l, nil, s)
					var size int
					b.ReportAllocs()
					for b.Loop() {
						if mode == "cold" {
							l.shared = nil
						}
						rec := &discardRecorder{header: http.Header{}}
						h.ServeHTTP(rec, req)
						if rec.code != http.StatusOK {
							b.Fatalf("status %d", rec.code)
						}
						size = rec.n
					}
					b.ReportMetric(float64(size), "resp-bytes")
				})
			}
		}
	}
}

// benchLister is a sharingLister of n objects like kapi-bench's (custom
// resources of ~400 bytes of JSON) or small ConfigMaps.
func benchLister(tc listCase, n int) *sharingLister {
	l := tc.lister(0, metav1.ListMeta{ResourceVersion: "4242"})
	for i := range n {
		switch tc.name {
		case "configmaps":
			l.objs = append(l.objs, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%05d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(100 + i), UID: "5b1ad6f0-7c4c-4f5e-9d0c-3b0e2f1a9c11"},
				Data:       map[string]string{"text": "a config map of a few hundred bytes; padding padding padding padding padding", "n": fmt.Sprint(i)},
			})
		default:
			l.objs = append(l.objs, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": fmt.Sprintf("t%05d", i), "namespace": "ns", "resourceVersion": fmt.Sprint(100 + i),
					"uid": "5b1ad6f0-7c4c-4f5e-9d0c-3b0e2f1a9c11", "generation": int64(1), "creationTimestamp": "2026-11-26T13:00:00Z"},
				"spec": map[string]any{"n": int64(0), "tags": []any{"a", "b", "c"},
					"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding"},
			}})
		}
	}
	return l
}

// discardRecorder is a ResponseWriter that counts and drops the body.
type discardRecorder struct {
	header http.Header
	code   int
	n      int
}

func (r *discardRecorder) Header() http.Header  { return r.header }
func (r *discardRecorder) WriteHeader(code int) { r.code = code }
func (r *discardRecorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	r.n += len(p)
	return len(p), nil
}

// TestSharedListGzipAcrossChanges: gzipped lists from shared items (whose
// compressed items are kept between lists) equal the lists encoded whole
// when the list's metadata changes with the same items, when one item is
// replaced (a write), and when items go, in each direction.
func TestSharedListGzipAcrossChanges(t *testing.T) {
	remaining := int64(7)
	for _, tc := range listCases() {
		l := tc.lister(1000, metav1.ListMeta{ResourceVersion: "100"})
		step := func(name string) {
			t.Helper()
			name = tc.name + ": " + name
			got := serveList(t, tc.scope(true), l, "application/json", "gzip", "")
			want := serveList(t, tc.scope(false), l, "application/json", "gzip", "")
			if got.encoding != "gzip" {
				t.Fatalf("%s: not gzipped (%q)", name, got.encoding)
			}
			compareResponses(t, name, got, want)
		}
		step("first")
		step("again")
		l.meta = metav1.ListMeta{ResourceVersion: "123456789", Continue: "token==", RemainingItemCount: &remaining}
		step("same items, other metadata")
		// A write replaces item 500: a new shared object.
		changed := l.objs[500].DeepCopyObject()
		m, _ := meta.Accessor(changed)
		m.SetLabels(map[string]string{"changed": "yes"})
		m.SetResourceVersion("999")
		l.objs[500] = changed
		l.shared[500] = cacheable.New(changed)
		step("one item replaced")
		step("one item replaced, again")
		l.objs, l.shared = l.objs[:900], l.shared[:900]
		step("fewer items")
		l.objs, l.shared = l.objs[:900:900], append(l.shared[:900:900], cacheable.New(l.objs[0].DeepCopyObject()))
		l.objs = append(l.objs, l.objs[0].DeepCopyObject())
		step("an item added")
	}
}

// Built-in list items carry no kind or apiVersion, as kube-apiserver
// v1.37.2's (its items are converted from internal objects), even when the
// stored objects have them set (kapi's storage decodes the served
// version); custom resources' items keep theirs, as upstream's. Whole and
// shared (watch cache) lists alike, JSON and YAML, and the shared objects
// are not changed.
func TestListItemsWithoutTypeMeta(t *testing.T) {
	for _, tc := range listCases() {
		l := tc.lister(3, metav1.ListMeta{ResourceVersion: "5"})
		for _, o := range l.objs {
			if _, ok := o.(*unstructured.Unstructured); !ok {
				o.GetObjectKind().SetGroupVersionKind(cmGVK)
			}
		}
		for _, shared := range []bool{false, true} {
			for _, accept := range []string{"application/json", "application/yaml"} {
				got := serveList(t, tc.scope(shared), l, accept, "", "")
				body := string(got.body)
				kinds := strings.Count(body, `"kind":"ConfigMap"`) + strings.Count(body, "\n  kind: ConfigMap") + strings.Count(body, "\n- apiVersion: v1\n")
				crKinds := strings.Count(body, `"kind":"Widget"`) + strings.Count(body, "kind: Widget\n")
				switch tc.name {
				case "configmaps":
					if got.code != http.StatusOK || kinds != 0 || !strings.Contains(body, "ConfigMapList") {
						t.Errorf("%s shared=%v %s: %d items with a kind, status %d:\n%.400s", tc.name, shared, accept, kinds, got.code, body)
					}
				default:
					if got.code != http.StatusOK || crKinds != 3 {
						t.Errorf("%s shared=%v %s: %d items with their kind, want 3, status %d:\n%.400s", tc.name, shared, accept, crKinds, got.code, body)
					}
				}
			}
		}
		for _, o := range l.objs {
			if o.GetObjectKind().GroupVersionKind().Empty() {
				t.Errorf("%s: a stored object lost its kind", tc.name)
			}
		}
	}
}
