package etcd3

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// TestWatchFromCurrentIsExactlyAfterItsRevision: a watch started at the
// current revision while another goroutine writes under its prefix
// delivers exactly the writes after the revision WatchFromCurrent returned
// (none of those at or before it, every one after it, once, in order), and
// a list made after it returned is at that revision or later.
func TestWatchFromCurrentIsExactlyAfterItsRevision(t *testing.T) {
	_, _, cms := progressStores(t)
	ctx := t.Context()
	const writes = 60
	revs := make(chan uint64, writes)
	started := make(chan struct{})
	go func() {
		defer close(revs)
		for i := range writes {
			if i == writes/3 {
				close(started)
			}
			out := &corev1.ConfigMap{}
			name := fmt.Sprintf("c%d", i)
			if err := cms.Create(ctx, cmKey(name), newCM(name, nil, nil), out); err != nil {
				t.Errorf("create %s: %v", name, err)
				return
			}
			rv, _ := storage.ObjectResourceVersion(out)
			revs <- rv
		}
	}()
	<-started
	w, from, err := cms.WatchFromCurrent(ctx, "/configmaps", storage.ListOptions{Recursive: true})
	if err != nil {
		t.Fatalf("watch from current: %v", err)
	}
	defer w.Stop()
	list := &corev1.ConfigMapList{}
	if err := cms.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true}, list); err != nil {
		t.Fatalf("list: %v", err)
	}
	if lrv, _ := storage.ParseResourceVersion(list.ResourceVersion); lrv < from {
		t.Fatalf("list after the watch at revision %d, before the watch's revision %d", lrv, from)
	}
	var want []uint64
	for rv := range revs {
		if rv > from {
			want = append(want, rv)
		}
	}
	if len(want) == 0 || len(want) == writes {
		t.Logf("watch started after %d of %d writes' revisions", writes-len(want), writes)
	}
	var got []uint64
	for len(got) < len(want) {
		ev := nextEvent(t, w)
		if ev.Type != watch.Added {
			t.Fatalf("got a %s event, want ADDED", ev.Type)
		}
		got = append(got, rvOf(t, ev.Object))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("watch from revision %d: got events at %v, want %v", from, got, want)
	}
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("unexpected event after the last write: %s %v", ev.Type, ev.Object)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestWatchFromCurrentAnswersTheFirstProgressRequest: a watch started at
// the current revision is up to date in etcd at once, so ONE progress
// request, made right after writes to another resource, gets its BOOKMARK.
// A watch started from an older revision (what a list then a watch from the
// list's revision gives when anything was written in between) is caught up
// by etcd only in its 100 ms sync loop, and etcd drops a progress request
// made while a watch of the stream is behind: a single request would get
// no answer (the periodic notifications here are an hour apart).
func TestWatchFromCurrentAnswersTheFirstProgressRequest(t *testing.T) {
	_, pods, cms := progressStores(t)
	ctx := t.Context()
	for i := range 3 {
		name := fmt.Sprintf("before%d", i)
		if err := cms.Create(ctx, cmKey(name), newCM(name, nil, nil), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	w, _, err := pods.WatchFromCurrent(ctx, "/pods", storage.ListOptions{
		Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true},
	})
	if err != nil {
		t.Fatalf("watch from current: %v", err)
	}
	defer w.Stop()
	out := &corev1.ConfigMap{}
	if err := cms.Create(ctx, cmKey("after"), newCM("after", nil, nil), out); err != nil {
		t.Fatalf("create: %v", err)
	}
	want, _ := storage.ObjectResourceVersion(out)
	if err := pods.RequestWatchProgress(ctx); err != nil {
		t.Fatalf("request progress: %v", err)
	}
	deadline := time.After(eventWait)
	for {
		select {
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
			t.Fatalf("no bookmark at %d or later within %s after one progress request", want, eventWait)
		}
	}
}
