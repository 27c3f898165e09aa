package memory

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Apply deletes in the order given, then puts by key, one revision per
// change, skips no-op changes, and a watcher sees each change as an
// ordinary event in that order.
func TestApplyOrderAndRevisions(t *testing.T) {
	b := newTestBackend(t, testConfig())
	s := podStore(b)
	createPods(t, s, "a", 3) // /pods/a/p0000..p0002
	data, start, err := b.Read("/pods/")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: fmt.Sprint(start), Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	rev, err := b.Apply(
		map[string][]byte{
			"/pods/b/p0001": data["/pods/a/p0001"], // new key
			"/pods/a/p0000": data["/pods/a/p0000"], // same value: skipped
		},
		[]string{"/pods/a/p0002", "/pods/a/missing", "/pods/a/p0001"}, // missing: skipped
	)
	if err != nil {
		t.Fatal(err)
	}
	if want := start + 3; rev != want {
		t.Fatalf("Apply returned revision %d, want %d (three changes after %d)", rev, want, start)
	}
	type seen struct {
		typ  watch.EventType
		name string
		rv   string
	}
	want := []seen{
		{watch.Deleted, "p0002", fmt.Sprint(start + 1)},
		{watch.Deleted, "p0001", fmt.Sprint(start + 2)},
		{watch.Added, "p0001", fmt.Sprint(start + 3)},
	}
	for i, wv := range want {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d events", i)
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatal(err)
			}
			got := seen{ev.Type, m.GetName(), m.GetResourceVersion()}
			if got != wv {
				t.Errorf("event %d: got %+v, want %+v", i, got, wv)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %d", i)
		}
	}
	after, _, err := b.Read("/pods/")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || after["/pods/a/p0000"] == nil || after["/pods/b/p0001"] == nil {
		t.Errorf("after Apply the store holds %d keys: %v", len(after), keys(after))
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Keys lists the live keys under a prefix in order, without deleted ones,
// at the revision Read reads at.
func TestKeys(t *testing.T) {
	b := newTestBackend(t, testConfig())
	s := podStore(b)
	createPods(t, s, "b", 2)
	createPods(t, s, "a", 3)
	if err := s.Delete(t.Context(), "/pods/a/p0001", &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	data, rev, err := b.Read("/pods/")
	if err != nil {
		t.Fatal(err)
	}
	got, krev, err := b.Keys("/pods/")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(maps.Keys(data))
	if !slices.Equal(got, want) || krev != rev {
		t.Errorf("Keys = %v at %d, want %v at %d", got, krev, want, rev)
	}
	if got, _, _ := b.Keys("/pods/a/"); !slices.Equal(got, []string{"/pods/a/p0000", "/pods/a/p0002"}) {
		t.Errorf(`Keys("/pods/a/") = %v`, got)
	}
}

// A batch that overfills a watcher's queue cuts it off once (it is not
// pushed to again, nor reported again), and a read waiting for a revision
// of the batch is released when the batch is written.
func TestApplyCutsOffOnceAndReleasesWaiters(t *testing.T) {
	var warnings atomic.Int32
	cfg := testConfig()
	cfg.WatchBufferSize = 2
	cfg.FreshWait = 10 * time.Second
	cfg.Logger = slog.New(countingHandler{n: &warnings})
	b := newTestBackend(t, cfg)
	s := podStore(b)
	createPods(t, s, "a", 6)
	_, start, err := b.Read("/pods/")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: fmt.Sprint(start), Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	waited := make(chan error, 1)
	go func() { waited <- b.waitForRevision(t.Context(), "/pods/a/p0005", start+6) }()
	time.Sleep(50 * time.Millisecond) // the waiter waits before the batch
	t0 := time.Now()
	var deletes []string
	for i := range 6 {
		deletes = append(deletes, fmt.Sprintf("/pods/a/p%04d", i))
	}
	if _, err := b.Apply(nil, deletes); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil || time.Since(t0) > 5*time.Second {
		t.Errorf("waiter for revision %d: %v after %v", start+6, err, time.Since(t0))
	}
	if n := warnings.Load(); n != 1 {
		t.Errorf("%d slow-watcher warnings, want 1", n)
	}
	for range w.ResultChan() { // closes: the watcher was cut off
	}
}

// countingHandler counts the records at level Warn and above.
type countingHandler struct{ n *atomic.Int32 }

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// Changed's channel is closed by the first write after the revision it
// was asked for (by Apply as by a create), not before; it is closed at
// once for a revision already passed or a closed backend.
func TestChanged(t *testing.T) {
	b := newTestBackend(t, testConfig())
	s := podStore(b)
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	_, rev, err := b.Read("")
	if err != nil {
		t.Fatal(err)
	}
	ch := b.Changed(rev)
	if closed(ch) {
		t.Fatal("Changed(current revision) is closed before any write")
	}
	createPods(t, s, "a", 1)
	if !closed(ch) {
		t.Fatal("Changed's channel is not closed after a create")
	}
	if !closed(b.Changed(rev)) {
		t.Error("Changed(an older revision) is not closed")
	}
	data, rev, err := b.Read("")
	if err != nil {
		t.Fatal(err)
	}
	ch = b.Changed(rev)
	if closed(ch) {
		t.Fatal("Changed(current revision) is closed before any write")
	}
	if _, err := b.Apply(map[string][]byte{"/pods/b/p0000": data["/pods/a/p0000"]}, nil); err != nil {
		t.Fatal(err)
	}
	if !closed(ch) {
		t.Fatal("Changed's channel is not closed after Apply")
	}
	rev = b.Revision()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !closed(b.Changed(rev)) {
		t.Error("Changed on a closed backend is not closed")
	}
}
