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
	pods := newStore(func() runtime.Object { return &corev1.Pod{} })
	cms := newStore(func() runtime.Object { return &corev1.ConfigMap{} })
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
