package cacher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// failingCodec fails every decode while failing is set, as a custom
// resource's storage codec does while its conversion webhook fails.
type failingCodec struct {
	runtime.Codec
	failing *atomic.Bool
}

func (c failingCodec) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if c.failing.Load() {
		return nil, nil, errors.New("converter is down")
	}
	return c.Codec.Decode(data, gvk, into)
}

// A watch cache whose list fails because stored objects cannot be decoded
// answers as kube-apiserver v1.37.2's (recorded on the reference with a
// custom resource whose conversion webhook fails, kube-apiserver restarted
// so that its cache lists with the webhook down): lists and watches it
// would serve get 429 "storage is (re)initializing: failed to list
// <unspecified>: <the list's StorageReadError>" with Retry-After 1 at
// first; a page without selectors is read from storage and gets the
// StorageReadError naming the corrupt object(s) of its page. Once the
// objects decode again the cache initializes and serves.
func TestInitFailureAnswers429(t *testing.T) {
	ctx := context.Background()
	var failing atomic.Bool
	b := memory.NewBackend(memory.BackendConfig{Logger: quietLogger(), BookmarkInterval: testBookmarkInterval, CompactionInterval: -1})
	t.Cleanup(func() { _ = b.Close() })
	pr := storagetest.PodResource(failingCodec{Codec: storagetest.Codec(), failing: &failing})
	under := b.Store(memory.Config{Codec: pr.Codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GroupResource: schema.GroupResource{Resource: "pods"}, ResourcePrefix: pr.Prefix})
	revs := map[string]string{}
	for _, name := range []string{"p1", "p2", "p3"} {
		out := &corev1.Pod{}
		in := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		if err := under.Create(ctx, "/pods/ns/"+name, in, out); err != nil {
			t.Fatal(err)
		}
		revs[name] = out.ResourceVersion
	}
	failing.Store(true)
	c, err := New(Config{Storage: under, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, BookmarkInterval: testBookmarkInterval, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	deadline := time.Now().Add(waitTimeout)
	for c.initFailure() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the cache's failed list was not recorded")
		}
		time.Sleep(5 * time.Millisecond)
	}

	corrupt := func(name string) string {
		return fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: /pods/ns/%s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%s: converter is down", name, revs[name])
	}
	want429 := "storage is (re)initializing: failed to list <unspecified>: failed to read one or more pods from the storage: " + corrupt("p1") + " (and 2 more)"
	check429 := func(what string, err error) {
		t.Helper()
		st, ok := err.(apierrors.APIStatus)
		if !ok {
			t.Fatalf("%s: got %v, want a 429 status", what, err)
		}
		s := st.Status()
		if s.Code != http.StatusTooManyRequests || s.Reason != metav1.StatusReasonTooManyRequests || s.Message != want429 ||
			s.Details == nil || s.Details.RetryAfterSeconds != 1 {
			t.Errorf("%s: got %+v, want 429 TooManyRequests %q, retryAfterSeconds 1", what, s, want429)
		}
	}
	sel := labels.SelectorFromSet(labels.Set{"a": "b"})
	for _, o := range []storage.ListOptions{
		{Recursive: true},
		{Recursive: true, ResourceVersion: "0"},
		{Recursive: true, ResourceVersion: "0", Predicate: storage.SelectionPredicate{Label: sel}},
		{Recursive: true, Predicate: storage.SelectionPredicate{Label: sel, Limit: 1}},
		{Recursive: true, ResourceVersion: revs["p3"], ResourceVersionMatch: metav1.ResourceVersionMatchExact},
	} {
		err := c.GetList(ctx, "/pods", o, &corev1.PodList{})
		check429(fmt.Sprintf("list %+v", o), err)
	}
	_, err = c.Watch(ctx, "/pods", storage.ListOptions{Recursive: true})
	check429("watch", err)

	// A page without selectors is read from storage, which reads only the
	// page's own keys.
	err = c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1}}, &corev1.PodList{})
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("page: got %v, want a 500 status", err)
	}
	s := st.Status()
	wantCause := metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: "/pods/ns/p1", Message: corrupt("p1")}
	if s.Code != http.StatusInternalServerError || s.Reason != metav1.StatusReasonStoreReadError ||
		s.Message != "failed to read one or more pods from the storage: "+corrupt("p1") || s.Details == nil ||
		s.Details.Name != "list" || s.Details.Kind != "pods" || len(s.Details.Causes) != 1 || s.Details.Causes[0] != wantCause {
		t.Errorf("page: got %+v, want 500 StorageReadError naming p1 only", s)
	}

	// Get is read from storage (not a 429), as upstream's.
	if err := c.Get(ctx, "/pods/ns/p2", storage.GetOptions{}, &corev1.Pod{}); !storage.IsCorruptObj(err) {
		t.Errorf("get: got %v, want the corrupt-object error", err)
	}

	failing.Store(false)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	list := &corev1.PodList{}
	if err := c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, ResourceVersion: "0"}, list); err != nil || len(list.Items) != 3 {
		t.Fatalf("list once decodable: %d items, %v", len(list.Items), err)
	}
	if c.initFailure() != nil {
		t.Error("a ready cache still reports its failed list")
	}
}

// Upstream's Retry-After for an unready cache: e^(0.06·s) within [1, 30].
func TestRetryAfterUnready(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {10 * time.Second, 1}, {12 * time.Second, 2}, {27 * time.Second, 5}, {57 * time.Second, 30}, {time.Hour, 30}} {
		if got := retryAfterUnready(tc.d); got != tc.want {
			t.Errorf("retryAfterUnready(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// An underlying watch that keeps failing at one revision (an event the
// cache cannot decode) makes the cache relist after
// Config.WatchFailureRelist, as upstream's reflector gives up retrying
// its watch after 30 s; the relist fails too while the objects cannot be
// decoded (429), and succeeds once they can.
func TestWatchFailureRelists(t *testing.T) {
	ctx := context.Background()
	var failing atomic.Bool
	b := memory.NewBackend(memory.BackendConfig{Logger: quietLogger(), BookmarkInterval: testBookmarkInterval, CompactionInterval: -1})
	t.Cleanup(func() { _ = b.Close() })
	pr := storagetest.PodResource(failingCodec{Codec: storagetest.Codec(), failing: &failing})
	under := b.Store(memory.Config{Codec: pr.Codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GroupResource: schema.GroupResource{Resource: "pods"}, ResourcePrefix: pr.Prefix})
	writer := b.Store(memory.Config{Codec: storagetest.Codec(), NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc})
	create := func(name string) {
		t.Helper()
		if err := writer.Create(ctx, "/pods/ns/"+name, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}, &corev1.Pod{}); err != nil {
			t.Fatal(err)
		}
	}
	create("p1")
	c, err := New(Config{Storage: under, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, BookmarkInterval: testBookmarkInterval, Logger: quietLogger(),
		WatchFailureRelist: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	create("p2")
	deadline := time.Now().Add(waitTimeout)
	for c.initFailure() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the cache did not relist after its watch kept failing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	err = c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, ResourceVersion: "0"}, &corev1.PodList{})
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("list while the relist fails: got %v, want 429", err)
	}
	failing.Store(false)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	list := &corev1.PodList{}
	if err := c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, ResourceVersion: "0"}, list); err != nil || len(list.Items) != 2 {
		t.Fatalf("list once decodable: %d items, %v", len(list.Items), err)
	}
}
