package memory

import (
	"fmt"
	"testing"
	"time"

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
