package storagetest

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func compactionCases() []testCase {
	return []testCase{
		{"CurrentStateSurvives", testCompactionKeepsState},
		{"ListExactExpired", testCompactionListExact},
		{"ContinueExpired", testCompactionContinue},
		{"WatchExpired", testCompactionWatch},
	}
}

// history writes a few changes and returns the revision after the first one.
func (e *env) history() (early uint64) {
	e.t.Helper()
	early = rvOf(e.t, e.create("ns", "a", map[string]string{"v": "1"}, ""))
	e.create("ns", "b", nil, "")
	e.update("ns", "a", func(p *corev1.Pod) { p.Labels["v"] = "2" })
	e.create("ns", "c", nil, "")
	e.delete("ns", "c")
	e.update("ns", "b", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })
	return early
}

func testCompactionKeepsState(t *testing.T, e *env) {
	e.history()
	before, err := e.list("/pods", storage.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	rev := e.currentRevision()
	e.b.Compact(e.ctx, t, rev)
	after, err := e.list("/pods", storage.ListOptions{})
	if err != nil {
		t.Fatalf("list after compaction: %v", err)
	}
	var wantItems, gotItems []string
	for _, p := range before.Items {
		wantItems = append(wantItems, p.Name+"@"+p.ResourceVersion)
	}
	for _, p := range after.Items {
		gotItems = append(gotItems, p.Name+"@"+p.ResourceVersion)
	}
	if !slices.Equal(gotItems, wantItems) {
		t.Fatalf("after compaction at %d: items %v, want %v", rev, gotItems, wantItems)
	}
	exact, err := e.list("/pods", storage.ListOptions{ResourceVersion: rvString(rev), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil || len(exact.Items) != len(before.Items) {
		t.Fatalf("exact list at the compacted revision %d: %v, %d items; want %d items", rev, err, len(exact.Items), len(before.Items))
	}
	a, err := e.get("ns", "a")
	if err != nil || a.Labels["v"] != "2" {
		t.Fatalf("get after compaction: %v, v=%q; want v=2", err, a.Labels["v"])
	}
	// Writes go on at later revisions.
	if d := e.create("ns", "d", nil, ""); rvOf(t, d) <= rev {
		t.Fatalf("create after compaction at %d got resourceVersion %s", rev, d.ResourceVersion)
	}
}

func testCompactionListExact(t *testing.T, e *env) {
	early := e.history()
	rev := e.currentRevision()
	e.b.Compact(e.ctx, t, rev)
	_, err := e.list("/pods", storage.ListOptions{ResourceVersion: rvString(early), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	wantCode(t, fmt.Sprintf("exact list at %d after compaction at %d", early, rev), err, storage.ErrCodeExpired)
	_, err = e.list("/pods", storage.ListOptions{ResourceVersion: rvString(early), Predicate: storage.SelectionPredicate{Limit: 1}})
	wantCode(t, "legacy paged list at a compacted revision", err, storage.ErrCodeExpired)
}

func testCompactionContinue(t *testing.T, e *env) {
	for i := range 6 {
		e.create("p", fmt.Sprintf("p%d", i), nil, "")
	}
	first, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2}})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v continue %q", err, first.Continue)
	}
	e.update("p", "p4", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })
	e.b.Compact(e.ctx, t, e.currentRevision())
	_, err = e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2, Continue: first.Continue}})
	wantCode(t, "continue after compaction", err, storage.ErrCodeContinueExpired)
	if !storage.IsExpired(err) {
		t.Fatalf("IsExpired(%v) = false, want true", err)
	}
}

// expectWatchExpired accepts either form of a 410 for a watch: an
// ErrCodeExpired from Watch, or one ERROR event with a 410 Status.
func expectWatchExpired(t *testing.T, w watch.Interface, err error) {
	t.Helper()
	if err != nil {
		wantCode(t, "watch", err, storage.ErrCodeExpired)
		return
	}
	defer w.Stop()
	ev := next(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != http.StatusGone {
		t.Fatalf("got %s %T %+v, want an ERROR event with a 410 Status", ev.Type, ev.Object, ev.Object)
	}
	expectClosed(t, w)
}

func testCompactionWatch(t *testing.T, e *env) {
	early := e.history()
	rev := e.currentRevision()
	e.b.Compact(e.ctx, t, rev)
	w, err := e.pods.Watch(e.ctx, "/pods", storage.ListOptions{ResourceVersion: rvString(early), Recursive: true, Predicate: storage.SelectionPredicate{GetAttrs: PodAttrs}})
	expectWatchExpired(t, w, err)

	// From the compacted revision on, watching works.
	w2 := e.watch("/pods", storage.ListOptions{ResourceVersion: rvString(rev), Recursive: true})
	d := e.create("ns", "d", nil, "")
	if got := nextChange(t, w2); got != added(d) {
		t.Fatalf("watch from the compacted revision: got %v, want %v", got, added(d))
	}
}
