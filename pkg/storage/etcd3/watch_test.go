package etcd3

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

const eventWait = 10 * time.Second

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want an event")
		}
		return ev
	case <-time.After(eventWait):
		t.Fatalf("no event within %s", eventWait)
	}
	return watch.Event{}
}

type wantEvent struct {
	typ  watch.EventType
	name string
	rv   uint64 // 0: not checked
}

func expectEvents(t *testing.T, w watch.Interface, want ...wantEvent) {
	t.Helper()
	for i, we := range want {
		ev := nextEvent(t, w)
		if ev.Type != we.typ {
			t.Fatalf("event %d: got %s %v, want %s %s", i, ev.Type, ev.Object, we.typ, we.name)
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			t.Fatalf("event %d: got object %T, want *ConfigMap", i, ev.Object)
		}
		if we.name != "" && cm.Name != we.name {
			t.Errorf("event %d: got %s %s, want %s", i, ev.Type, cm.Name, we.name)
		}
		if we.rv != 0 && rvOf(t, cm) != we.rv {
			t.Errorf("event %d (%s %s): got rv %s, want %d", i, ev.Type, cm.Name, cm.ResourceVersion, we.rv)
		}
	}
}

func setLabel(t *testing.T, s *Store, name, v string) uint64 {
	t.Helper()
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(context.Background(), cmKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap)
		cm.Labels = map[string]string{"color": v}
		return cm, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rvOf(t, out)
}

func TestWatchSelectorTransitions(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	start := rvOf(t, mustCreate(t, s, newCM("a", map[string]string{"color": "blue"}, nil)))
	w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{
		ResourceVersion: strconv.FormatUint(start, 10),
		Recursive:       true,
		Predicate:       storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"color": "red"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	rvIn := setLabel(t, s, "a", "red")    // enters: ADDED
	rvMod := setLabel(t, s, "a", "red")   // no change: no event (no write)
	rvOut := setLabel(t, s, "a", "green") // leaves: DELETED with the old object
	setLabel(t, s, "a", "blue")           // stays out: nothing
	created := mustCreate(t, s, newCM("b", map[string]string{"color": "red"}, nil))
	out := &corev1.ConfigMap{}
	if err := s.Delete(ctx, cmKey("b"), out, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if rvMod != rvIn {
		t.Errorf("no-op update wrote: rv %d, want %d", rvMod, rvIn)
	}
	expectEvents(t, w,
		wantEvent{watch.Added, "a", rvIn},
		wantEvent{watch.Deleted, "a", rvOut},
		wantEvent{watch.Added, "b", rvOf(t, created)},
		wantEvent{watch.Deleted, "b", rvOf(t, out)},
	)
}

func TestWatchInitialEvents(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	rv := seed(t, s, 3)
	yes, no := true, false

	t.Run("rv empty lists then watches", func(t *testing.T) {
		w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, wantEvent{watch.Added, "c00", 0}, wantEvent{watch.Added, "c01", 0}, wantEvent{watch.Added, "c02", rv})
		next := updateData(t, s, "c01", "k", "v")
		expectEvents(t, w, wantEvent{watch.Modified, "c01", rvOf(t, next)})
	})

	t.Run("send initial events ends with a bookmark", func(t *testing.T) {
		cur, _ := s.CurrentRevision(ctx)
		w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, SendInitialEvents: &yes,
			Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, wantEvent{watch.Added, "c00", 0}, wantEvent{watch.Added, "c01", 0}, wantEvent{watch.Added, "c02", 0})
		ev := nextEvent(t, w)
		m, _ := ev.Object.(metav1.Object)
		if ev.Type != watch.Bookmark || m == nil || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" ||
			m.GetResourceVersion() != strconv.FormatUint(cur, 10) {
			t.Fatalf("got %s %v, want an initial-events-end BOOKMARK at %d", ev.Type, ev.Object, cur)
		}
	})

	t.Run("no initial events starts now", func(t *testing.T) {
		w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, SendInitialEvents: &no})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		next := updateData(t, s, "c02", "k", "v")
		expectEvents(t, w, wantEvent{watch.Modified, "c02", rvOf(t, next)})
	})

	t.Run("send initial events from the future", func(t *testing.T) {
		cur, _ := s.CurrentRevision(ctx)
		_, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, SendInitialEvents: &yes,
			ResourceVersion: strconv.FormatUint(cur+5, 10)})
		wantCode(t, err, storage.ErrCodeTooLargeResourceVersion)
	})
}

func TestWatchResumeFromEveryRevision(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	var revs []uint64
	for i := range 5 {
		revs = append(revs, setOrCreate(t, s, i))
	}
	for i, rev := range revs {
		w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatUint(rev, 10)})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range revs[i+1:] {
			ev := nextEvent(t, w)
			if got := rvOf(t, ev.Object); got != want {
				t.Errorf("watch from %d: got event at %d, want %d", rev, got, want)
			}
		}
		w.Stop()
	}
}

func setOrCreate(t *testing.T, s *Store, i int) uint64 {
	if i == 0 {
		return rvOf(t, mustCreate(t, s, newCM("r", nil, nil)))
	}
	return rvOf(t, updateData(t, s, "r", "i", strconv.Itoa(i)))
}

func TestWatchCompacted(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	rv := seed(t, s, 3)
	updateData(t, s, "c00", "k", "v")
	cur, _ := s.CurrentRevision(ctx)
	if err := s.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatUint(rv-2, 10)})
	if storage.IsExpired(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("got %s %v, want ERROR with a 410 Expired Status", ev.Type, ev.Object)
	}
	select {
	case _, open := <-w.ResultChan():
		if open {
			t.Errorf("got another event after the error, want the watch closed")
		}
	case <-time.After(eventWait):
		t.Errorf("watch not closed after the error")
	}
}

func TestWatchBookmarks(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	rv := seed(t, s, 1)
	w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatUint(rv, 10),
		ProgressNotify: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	if ev.Type != watch.Bookmark || rvOf(t, ev.Object) < rv {
		t.Fatalf("got %s %v, want a BOOKMARK at >= %d", ev.Type, ev.Object, rv)
	}
	// The bookmark object is empty apart from its resourceVersion.
	if cm := ev.Object.(*corev1.ConfigMap); cm.Name != "" {
		t.Errorf("got bookmark object named %q, want empty", cm.Name)
	}
}

func TestWatchStopAndCancel(t *testing.T) {
	s, _ := newTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	seed(t, s, 2)
	w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads: the watcher is blocked sending; cancelling must end it.
	cancel()
	deadline := time.After(eventWait)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				w.Stop() // idempotent after the end
				return
			}
		case <-deadline:
			t.Fatal("watch not closed after its context was cancelled")
		}
	}
}

// TestSlowWatcherDoesNotBlockOthers: a watcher nobody reads must not delay
// another watcher's events.
func TestSlowWatcherDoesNotBlockOthers(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	rv := seed(t, s, 1)
	opts := storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatUint(rv, 10)}
	slow, err := s.Watch(ctx, "/configmaps/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	fast, err := s.Watch(ctx, "/configmaps/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	const n = resultBuffer * 3
	for i := range n {
		updateData(t, s, "c00", "i", strconv.Itoa(i))
	}
	for i := range n {
		ev := nextEvent(t, fast)
		if ev.Object.(*corev1.ConfigMap).Data["i"] != strconv.Itoa(i) {
			t.Fatalf("fast watcher event %d: got %v", i, ev.Object.(*corev1.ConfigMap).Data)
		}
	}
}
