package etcd3

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"google.golang.org/grpc/metadata"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
)

// TestRequestWatchProgress: after a write to another prefix, a progress
// request makes an idle watch send a BOOKMARK at (or past) that write's
// revision, although etcd's periodic notifications and the store's own
// idle bookmarks are an hour away. The watch and the request are made with
// contexts carrying different gRPC metadata: the store must still send the
// request on the watch's stream.
func TestRequestWatchProgress(t *testing.T) {
	_, pods, cms := progressStores(t)
	ctx := t.Context()

	cur, err := pods.CurrentRevision(ctx)
	if err != nil {
		t.Fatalf("current revision: %v", err)
	}
	wctx := metadata.AppendToOutgoingContext(ctx, "caller", "watch")
	w, err := pods.Watch(wctx, "/pods", storage.ListOptions{
		ResourceVersion: rvStr(cur), Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true},
	})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	for i := range 3 {
		out := &corev1.ConfigMap{}
		if err := cms.Create(ctx, cmKey("c"+rvStr(uint64(i))), newCM("c"+rvStr(uint64(i)), nil, nil), out); err != nil {
			t.Fatalf("create: %v", err)
		}
		want, _ := storage.ObjectResourceVersion(out)
		rctx := metadata.AppendToOutgoingContext(ctx, "caller", "progress")
		waitBookmark(t, w, want, func() {
			if err := pods.RequestWatchProgress(rctx); err != nil {
				t.Fatalf("request progress: %v", err)
			}
		})
	}
}

// progressStores starts an embedded etcd whose periodic progress
// notifications are an hour apart, and returns it with a pods store and a
// configmaps store on its one client, whose own idle bookmarks are an hour
// apart too.
func progressStores(t *testing.T) (srv *embedded.Server, pods, cms *Store) {
	t.Helper()
	srv, err := embedded.Start(context.Background(), embedded.Config{
		DataDir:                     filepath.Join(t.TempDir(), "etcd"),
		Logger:                      quietLogger(),
		UnsafeNoFsync:               true,
		WatchProgressNotifyInterval: time.Hour,
	})
	if err != nil {
		t.Fatalf("start embedded etcd: %v", err)
	}
	t.Cleanup(srv.Close)
	newStore := func(newFunc func() runtime.Object) *Store {
		return New(srv.Client(), Config{Codec: testCodec, NewFunc: newFunc, Logger: quietLogger(), ProgressNotifyInterval: time.Hour})
	}
	return srv, newStore(func() runtime.Object { return &corev1.Pod{} }), newStore(func() runtime.Object { return &corev1.ConfigMap{} })
}

// waitBookmark waits for a BOOKMARK at revision want or later, failing on
// any other event. request asks for progress at once and again every 200ms:
// etcd answers a progress request only while every watcher of the stream is
// synced, so a request made while one catches up is dropped (the cacher
// repeats its requests the same way).
func waitBookmark(t *testing.T, w watch.Interface, want uint64, request func()) {
	t.Helper()
	deadline := time.After(eventWait)
	request()
	again := time.NewTicker(200 * time.Millisecond)
	defer again.Stop()
	for {
		select {
		case <-again.C:
			request()
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed, want a bookmark at %d", want)
			}
			if ev.Type != watch.Bookmark {
				t.Fatalf("got a %s event, want a bookmark at %d", ev.Type, want)
			}
			if rv, _ := storage.ObjectResourceVersion(ev.Object); rv >= want {
				return
			}
		case <-deadline:
			t.Fatalf("no bookmark at %d or later within %s", want, eventWait)
		}
	}
}

func rvStr(v uint64) string { return strconv.FormatUint(v, 10) }

// TestRequestWatchProgressStaysWithItsStore: each Store watches on its own
// etcd watch stream, so a progress request of one resource's store gives a
// BOOKMARK to its own watch and none to another store's watch on the same
// client. On one shared stream every consistent read of one resource cost a
// notification to the watch of every resource (with 300 CRDs, lists after a
// restart took seconds each).
func TestRequestWatchProgressStaysWithItsStore(t *testing.T) {
	srv, pods, cms := progressStores(t)
	ctx := t.Context()
	cur, err := pods.CurrentRevision(ctx)
	if err != nil {
		t.Fatalf("current revision: %v", err)
	}
	watchOpts := storage.ListOptions{
		ResourceVersion: rvStr(cur), Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true},
	}
	pw, err := pods.Watch(ctx, "/pods", watchOpts)
	if err != nil {
		t.Fatalf("watch pods: %v", err)
	}
	defer pw.Stop()
	cw, err := cms.Watch(ctx, "/configmaps", watchOpts)
	if err != nil {
		t.Fatalf("watch configmaps: %v", err)
	}
	defer cw.Stop()

	// A write elsewhere moves etcd's revision past both watches'.
	if _, err := srv.Client().Put(ctx, "/elsewhere/x", "y"); err != nil {
		t.Fatalf("put: %v", err)
	}
	want := cur + 1
	waitBookmark(t, pw, want, func() {
		if err := pods.RequestWatchProgress(ctx); err != nil {
			t.Fatalf("request progress: %v", err)
		}
	})
	// The pods watch got its bookmark; on a shared stream the configmaps
	// watch would have had one at the same moment.
	select {
	case ev := <-cw.ResultChan():
		t.Fatalf("configmaps watch got a %s event from the pods store's progress request", ev.Type)
	case <-time.After(time.Second):
	}
	// Its own store's request still reaches it.
	waitBookmark(t, cw, want, func() {
		if err := cms.RequestWatchProgress(ctx); err != nil {
			t.Fatalf("request progress: %v", err)
		}
	})
}
