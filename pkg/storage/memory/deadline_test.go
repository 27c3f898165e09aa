package memory

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// A watch with a deadline that allows bookmarks gets one about 2 s before
// the deadline, even with a far longer bookmark interval.
func TestBookmarkBeforeDeadline(t *testing.T) {
	b := NewBackend(BackendConfig{BookmarkInterval: time.Hour, CompactionInterval: -1})
	t.Cleanup(func() { _ = b.Close() })
	codec := storagetest.Codec()
	cr := storagetest.ConfigMapResource(codec)
	s := b.Store(Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc})
	ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
	defer cancel()
	start := time.Now()
	w, err := s.Watch(ctx, "/configmaps", storage.ListOptions{
		Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Give the backend a revision to report.
	if err := s.Create(context.Background(), "/configmaps/ns/a", cr.NewFunc(), nil); err != nil {
		t.Logf("create: %v", err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Bookmark {
			if since := time.Since(start); since < time.Second {
				t.Fatalf("bookmark after %v, want it about 2s before the 3.5s deadline", since)
			}
			return
		}
	}
	t.Fatal("watch ended without a bookmark before its deadline")
}
