package memory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

func podStore(b *Backend) *Store {
	r := storagetest.PodResource(storagetest.Codec())
	return b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
}

func createPods(t testing.TB, s *Store, ns string, n int) []uint64 {
	t.Helper()
	revs := make([]uint64, 0, n)
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		out := &corev1.Pod{}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := s.Create(context.Background(), "/pods/"+ns+"/"+name, pod, out); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		rv, _ := storage.ObjectResourceVersion(out)
		revs = append(revs, rv)
	}
	return revs
}

func TestSlowWatcherIsTerminated(t *testing.T) {
	cfg := testConfig()
	cfg.WatchBufferSize = 4
	b := newTestBackend(t, cfg)
	s := podStore(b)
	slow, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer slow.Stop()
	// Nobody reads the watch: writes must still complete.
	createPods(t, s, "ns", 50)
	deadline := time.After(10 * time.Second)
	received := 0
	for {
		select {
		case _, ok := <-slow.ResultChan():
			if !ok {
				if received >= 50 {
					t.Fatalf("watcher got all %d events: want it cut off with a buffer of %d", received, cfg.WatchBufferSize)
				}
				// A fresh watch from the backend's history still works.
				w, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: "1", Recursive: true})
				if err != nil {
					t.Fatalf("re-watch: %v", err)
				}
				w.Stop()
				return
			}
			received++
		case <-deadline:
			t.Fatalf("slow watcher's channel still open after %d events", received)
		}
	}
}

func TestHistoryWindow(t *testing.T) {
	cfg := testConfig()
	cfg.HistoryWindow = 5
	b := newTestBackend(t, cfg)
	s := podStore(b)
	createPods(t, s, "ns", 30)
	if c := b.CompactedRevision(); c == 0 || b.Revision()-c > 2*cfg.HistoryWindow {
		t.Fatalf("compacted at %d with revision %d, want within %d revisions", c, b.Revision(), 2*cfg.HistoryWindow)
	}
	err := s.GetList(t.Context(), "/pods", storage.ListOptions{Recursive: true, ResourceVersion: "2",
		ResourceVersionMatch: metav1.ResourceVersionMatchExact}, &corev1.PodList{})
	if !storage.HasCode(err, storage.ErrCodeExpired) {
		t.Fatalf("exact list at 2: got %v, want expired", err)
	}
	if _, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: "2", Recursive: true}); !storage.IsExpired(err) {
		t.Fatalf("watch from 2: got %v, want expired", err)
	}
	l := &corev1.PodList{}
	if err := s.GetList(t.Context(), "/pods", storage.ListOptions{Recursive: true}, l); err != nil || len(l.Items) != 30 {
		t.Fatalf("list: %v, %d items, want 30", err, len(l.Items))
	}
}

func TestPeriodicCompaction(t *testing.T) {
	cfg := testConfig()
	cfg.CompactionInterval = 20 * time.Millisecond
	b := newTestBackend(t, cfg)
	s := podStore(b)
	createPods(t, s, "ns", 3)
	deadline := time.Now().Add(10 * time.Second)
	for b.CompactedRevision() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("compacted revision %d, want 3 within 10s", b.CompactedRevision())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCompactErrors(t *testing.T) {
	b := newTestBackend(t, testConfig())
	createPods(t, podStore(b), "ns", 3)
	tests := []struct {
		rev  uint64
		code int
	}{
		{4, storage.ErrCodeTooLargeResourceVersion},
		{2, 0},
		{2, storage.ErrCodeExpired},
		{1, storage.ErrCodeExpired},
		{3, 0},
	}
	for _, tt := range tests {
		err := b.Compact(t.Context(), tt.rev)
		if tt.code == 0 && err != nil || tt.code != 0 && !storage.HasCode(err, tt.code) {
			t.Fatalf("compact at %d: got %v, want code %d", tt.rev, err, tt.code)
		}
	}
}

func TestContinueExpiredHint(t *testing.T) {
	b := newTestBackend(t, testConfig())
	s := podStore(b)
	createPods(t, s, "ns", 5)
	first := &corev1.PodList{}
	if err := s.GetList(t.Context(), "/pods", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}}, first); err != nil {
		t.Fatalf("list: %v", err)
	}
	createPods(t, s, "other", 1)
	if err := b.Compact(t.Context(), b.Revision()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	err := s.GetList(t.Context(), "/pods", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2, Continue: first.Continue}}, &corev1.PodList{})
	tok, ok := storage.ContinueHint(err)
	if !storage.HasCode(err, storage.ErrCodeContinueExpired) || !ok || !strings.Contains(err.Error(), "too old to display a consistent list") {
		t.Fatalf("got %v (hint %v), want a continue-expired error with a fresh token", err, ok)
	}
	rest := &corev1.PodList{}
	if err := s.GetList(t.Context(), "/pods", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 10, Continue: tok}}, rest); err != nil {
		t.Fatalf("continue with the fresh token: %v", err)
	}
	var got []string
	for _, p := range rest.Items {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	if want := "ns/p0002 ns/p0003 ns/p0004 other/p0000"; strings.Join(got, " ") != want {
		t.Fatalf("rest of the list at the latest revision: %v, want %s", got, want)
	}
	if rest.ResourceVersion != fmt.Sprint(b.Revision()) {
		t.Fatalf("list resourceVersion %s, want the latest %d", rest.ResourceVersion, b.Revision())
	}
}

func TestClosedBackend(t *testing.T) {
	r := storagetest.PodResource(storagetest.Codec())
	s := New(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc, BackendConfig: testConfig()})
	createPods(t, s, "ns", 1)
	w, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: "1", Recursive: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for range w.ResultChan() {
	}
	err = s.Create(t.Context(), "/pods/ns/x", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, nil)
	if !storage.HasCode(err, storage.ErrCodeUnreachable) {
		t.Fatalf("create after close: got %v, want unreachable", err)
	}
	if _, err := s.Watch(t.Context(), "/pods", storage.ListOptions{Recursive: true}); !storage.HasCode(err, storage.ErrCodeUnreachable) {
		t.Fatalf("watch after close: got %v, want unreachable", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestInvalidKeys(t *testing.T) {
	s := podStore(newTestBackend(t, testConfig()))
	for _, key := range []string{"", "/", "/pods/../secrets/x", "/pods/./x", ".."} {
		if err := s.Get(t.Context(), key, storage.GetOptions{}, &corev1.Pod{}); err == nil {
			t.Errorf("get %q: got nil error, want invalid key", key)
		}
	}
}

func TestTooLargeResourceVersionWaits(t *testing.T) {
	b := newTestBackend(t, BackendConfig{FreshWait: 10 * time.Second, CompactionInterval: -1})
	s := podStore(b)
	createPods(t, s, "ns", 1)
	done := make(chan error, 1)
	go func() {
		done <- s.Get(context.Background(), "/pods/ns/p0000", storage.GetOptions{ResourceVersion: "2"}, &corev1.Pod{})
	}()
	createPods(t, s, "other", 1) // revision 2 arrives while the read waits
	if err := <-done; err != nil {
		t.Fatalf("get at a revision that arrives: %v", err)
	}
}

func TestDecodeIntoReusedObject(t *testing.T) {
	s := podStore(newTestBackend(t, testConfig()))
	createPods(t, s, "ns", 1)
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"stale": "x"}}}
	if err := s.Get(t.Context(), "/pods/ns/p0000", storage.GetOptions{}, out); err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(out.Labels) != 0 {
		t.Fatalf("labels %v, want none: Get must replace, not merge into, the destination", out.Labels)
	}
}
