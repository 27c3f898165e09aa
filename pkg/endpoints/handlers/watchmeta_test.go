package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// eventsWatcher replays events on every watch, as a watch cache does:
// with shared objects (one cacheable.Object per event, the same for every
// watcher) when the watch asks for them (cacheable.WithObjects), else the
// events' objects themselves (which a watch cache shares too: the
// handler copies them before encoding).
type eventsWatcher struct {
	events []watch.Event
	shared []watch.Event
	asked  int // watches that asked for shared objects
	mu     sync.Mutex
}

func newEventsWatcher(objs []runtime.Object) *eventsWatcher {
	w := &eventsWatcher{}
	for i, obj := range objs {
		t := watch.Added
		if i%2 == 1 {
			t = watch.Modified
		}
		w.events = append(w.events, watch.Event{Type: t, Object: obj})
		w.shared = append(w.shared, watch.Event{Type: t, Object: cacheable.New(obj)})
	}
	return w
}

func (w *eventsWatcher) Watch(ctx context.Context, _ *metainternalversion.ListOptions) (watch.Interface, error) {
	events := w.events
	if cacheable.Wanted(ctx) {
		w.mu.Lock()
		w.asked++
		w.mu.Unlock()
		events = w.shared
	}
	ch := make(chan watch.Event, len(events))
	for _, ev := range events {
		ch <- ev
	}
	close(ch)
	return watch.NewProxyWatcher(ch), nil
}

func serveWatch(t *testing.T, s *handlers.RequestScope, w *eventsWatcher, accept string) listResponse {
	t.Helper()
	return serveWatchOf(t, s, w, accept)
}

func serveWatchOf(t *testing.T, s *handlers.RequestScope, w rest.Watcher, accept string) listResponse {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/namespaces/ns/things?watch=true", nil)
	req.Header.Set("Accept", accept)
	req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
		IsResourceRequest: true, Verb: "watch", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version,
		Namespace: "ns", Resource: s.Resource.Resource,
	}))
	rec := httptest.NewRecorder()
	handlers.ListResource(nil, w, s).ServeHTTP(rec, req)
	return listResponse{code: rec.Code, ctype: rec.Header().Get("Content-Type"), body: rec.Body.Bytes()}
}

func sharedWatchScope(tc listCase) *handlers.RequestScope {
	s := tc.scope(false)
	s.SharedWatchObjects = true
	return s
}

var metadataWatchAccepts = []string{
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
	// client-go's metadata client
	"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
	"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
}

// TestSharedMetadataWatchBytes compares metadata watches (as=
// PartialObjectMetadata) of shared event objects, whose events are built
// from the shared object without a copy and encoded once
// (encodeSharedMetadata), with the same events from unshared objects (the
// copy path): same status, content type and bytes, for built-in and
// custom resources, JSON and protobuf, v1 and v1beta1, twice (the second
// from the kept encodings); the shared objects are left unchanged.
func TestSharedMetadataWatchBytes(t *testing.T) {
	for _, tc := range listCases() {
		objs := tc.lister(5, metav1.ListMeta{}).objs
		var before []runtime.Object
		for _, o := range objs {
			before = append(before, o.DeepCopyObject())
		}
		w := newEventsWatcher(objs)
		for _, accept := range metadataWatchAccepts {
			name := fmt.Sprintf("%s/%q", tc.name, accept)
			want := serveWatch(t, tc.scope(false), w, accept)
			if w.asked != 0 {
				t.Fatalf("%s: a scope without SharedWatchObjects asked for shared objects", name)
			}
			if want.code == http.StatusOK && !bytes.Contains(want.body, []byte("PartialObjectMetadata")) {
				t.Fatalf("%s: not a metadata watch: %s", name, want.body)
			}
			for range 2 {
				got := serveWatch(t, sharedWatchScope(tc), w, accept)
				compareResponses(t, name, got, want)
			}
			w.asked = 0
		}
		for i := range objs {
			if !reflect.DeepEqual(objs[i], before[i]) {
				t.Errorf("%s: shared object %d changed:\n%#v\n%#v", tc.name, i, objs[i], before[i])
			}
		}
	}
}

// TestSharedMetadataWatchEncodesOnce: a second metadata watcher of the
// same shared objects writes the kept event bytes: the test changes an
// object behind the shared one (which a watch cache never does) and the
// shared watch still sends the first encoding, an unshared one the new.
// Watches of the full object and of other transformations keep their own.
func TestSharedMetadataWatchEncodesOnce(t *testing.T) {
	const accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	for _, tc := range listCases() {
		objs := tc.lister(2, metav1.ListMeta{}).objs
		w := newEventsWatcher(objs)
		s := sharedWatchScope(tc)
		first := serveWatch(t, s, w, accept)
		full := serveWatch(t, s, w, "application/json")
		if bytes.Equal(first.body, full.body) || !bytes.Contains(full.body, []byte(`"spec"`)) && !bytes.Contains(full.body, []byte(`"data"`)) {
			t.Fatalf("%s: the full watch is not the full object: %s", tc.name, full.body)
		}
		setLabel(t, objs[0], "changed-behind-the-cache")
		again := serveWatch(t, s, w, accept)
		compareResponses(t, tc.name+" kept", again, first)
		fresh := serveWatch(t, tc.scope(false), w, accept)
		if !strings.Contains(string(fresh.body), "changed-behind-the-cache") || strings.Contains(string(again.body), "changed-behind-the-cache") {
			t.Errorf("%s: shared metadata watch did not send its kept encoding:\n%s\n%s", tc.name, again.body, fresh.body)
		}
		if again := serveWatch(t, s, w, "application/json"); !bytes.Equal(again.body, full.body) {
			t.Errorf("%s: the full watch's kept encoding changed:\n%s\n%s", tc.name, again.body, full.body)
		}
	}
}

// TestSharedMetadataWatchConcurrent: many metadata and full watchers of
// the same shared objects at once (run with -race: the metadata is read
// from the shared objects while other watchers encode them) all get the
// bytes one watcher gets alone.
func TestSharedMetadataWatchConcurrent(t *testing.T) {
	for _, tc := range listCases() {
		objs := tc.lister(20, metav1.ListMeta{}).objs
		wantMeta := serveWatch(t, tc.scope(false), newEventsWatcher(objs), metadataWatchAccepts[0])
		wantFull := serveWatch(t, tc.scope(false), newEventsWatcher(objs), "application/json")
		w := newEventsWatcher(objs)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				accept, want := metadataWatchAccepts[0], wantMeta
				if i%4 == 3 {
					accept, want = "application/json", wantFull
				}
				got := serveWatch(t, sharedWatchScope(tc), w, accept)
				compareResponses(t, fmt.Sprintf("%s watcher %d", tc.name, i), got, want)
			})
		}
		wg.Wait()
	}
}

func setLabel(t *testing.T, obj runtime.Object, v string) {
	t.Helper()
	m, ok := obj.(metav1.Object)
	if !ok {
		t.Fatalf("%T has no metadata", obj)
	}
	l := map[string]string{}
	for k, v := range m.GetLabels() {
		l[k] = v
	}
	l["changed"] = v
	m.SetLabels(l)
}

// BenchmarkMetadataWatchEvent writes one event of a custom resource of
// ~600 bytes (and of a ConfigMap) to a metadata watch (as=
// PartialObjectMetadata, what kapi's garbage collector asks for), each
// from a new shared object (a watch cache's event, one metadata watcher):
// "copy" takes the path every such event took before (a deep copy of the
// object, transformed and encoded), "shared" encodeSharedMetadata's;
// "unshared" is an event whose object is not shared (transformed without
// a copy, as before).
//
//	go test -run '^$' -bench BenchmarkMetadataWatchEvent -benchmem ./pkg/endpoints/handlers/
func BenchmarkMetadataWatchEvent(b *testing.B) {
	for _, tc := range listCases() {
		for _, mode := range []string{"copy", "shared", "unshared"} {
			b.Run(strings.ReplaceAll(tc.name, " ", "-")+"/"+mode, func(b *testing.B) {
				obj := tc.lister(1, metav1.ListMeta{}).objs[0]
				s := tc.scope(false)
				if mode != "unshared" {
					s = sharedWatchScope(tc)
				}
				req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/namespaces/ns/things?watch=true", nil)
				req.Header.Set("Accept", metadataWatchAccepts[0])
				req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
					IsResourceRequest: true, Verb: "watch", APIGroup: s.Kind.Group, APIVersion: s.Kind.Version,
					Namespace: "ns", Resource: s.Resource.Resource,
				}))
				ch := make(chan watch.Event, 64)
				done := make(chan struct{})
				rec := &discardWriter{h: http.Header{}}
				go func() {
					defer close(done)
					handlers.ListResource(nil, chanWatcher(ch), s).ServeHTTP(rec, req)
				}()
				b.ReportAllocs()
				for b.Loop() {
					var o runtime.Object = obj
					switch mode {
					case "shared":
						o = cacheable.New(obj)
					case "copy":
						o = copyOnlyShared{cacheable.New(obj)}
					}
					ch <- watch.Event{Type: watch.Modified, Object: o}
				}
				close(ch)
				<-done
				if rec.n == 0 {
					b.Fatal("nothing written")
				}
			})
		}
	}
}

// copyOnlyShared is a shared object that offers only what
// runtime.CacheableObject does (no EncodedShared): the handler copies it.
type copyOnlyShared struct{ o *cacheable.Object }

func (c copyOnlyShared) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	return c.o.CacheEncode(id, encode, w)
}
func (c copyOnlyShared) GetObject() runtime.Object        { return c.o.GetObject() }
func (c copyOnlyShared) GetObjectKind() schema.ObjectKind { return c.o.GetObjectKind() }
func (c copyOnlyShared) DeepCopyObject() runtime.Object   { return c.o.DeepCopyObject() }

type chanWatcher chan watch.Event

func (c chanWatcher) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	return watch.NewProxyWatcher(c), nil
}

type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
