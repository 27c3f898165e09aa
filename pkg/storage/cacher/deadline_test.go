package cacher

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// A watch with a deadline that allows bookmarks gets one about 2 s before
// the deadline, at the cache's revision, even when the periodic bookmark
// interval is far longer (kube's watch cache does the same).
func TestBookmarkBeforeDeadline(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.BookmarkInterval = time.Hour }})
	p := e.create("a", nil)
	rv := rvOf(t, p)
	// A write to another resource moves the global revision on.
	other := e.createCM("cm")
	e.waitRevision(other)

	ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
	defer cancel()
	start := time.Now()
	w, err := e.c.Watch(ctx, "/pods", storage.ListOptions{
		ResourceVersion: p.ResourceVersion,
		Recursive:       true,
		ProgressNotify:  true,
		Predicate:       storage.SelectionPredicate{AllowWatchBookmarks: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended without a bookmark before its deadline")
			}
			if ev.Type != watch.Bookmark {
				continue
			}
			if since := time.Since(start); since < time.Second {
				t.Fatalf("bookmark after %v, want it about 2s before the 3.5s deadline", since)
			}
			if got := rvOf(t, ev.Object); got < other || got <= rv {
				t.Fatalf("bookmark at %d, want the cache's revision (>= %d)", got, other)
			}
			return
		case <-time.After(waitTimeout):
			t.Fatal("no bookmark")
		}
	}
}

// Without bookmarks allowed, no bookmark is sent before the deadline.
func TestNoDeadlineBookmarkWithoutAllow(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.BookmarkInterval = time.Hour }})
	p := e.create("a", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	w, err := e.c.Watch(ctx, "/pods", storage.ListOptions{ResourceVersion: p.ResourceVersion, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Bookmark {
			t.Fatal("bookmark sent to a watch that did not allow them")
		}
	}
}
