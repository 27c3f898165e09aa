package handlers_test

import (
	"context"
	"reflect"
	"testing"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
)

// exclusiveWatcher replays its events on a watch that says its objects
// are its own (handlers.ExclusiveEvents), as the memory storage's do.
type exclusiveWatcher struct{ events []watch.Event }

type exclusiveWatch struct{ watch.Interface }

func (exclusiveWatch) ExclusiveEventObjects() bool { return true }

var _ handlers.ExclusiveEvents = exclusiveWatch{}

func (w *exclusiveWatcher) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	ch := make(chan watch.Event, len(w.events))
	for _, ev := range w.events {
		ch <- ev
	}
	close(ch)
	return exclusiveWatch{watch.NewProxyWatcher(ch)}, nil
}

// A watch whose objects are its own is encoded without copying them into
// the same bytes as a watch of shared objects, which are copied (the
// encoding writes an object's kind and apiVersion, then restores them)
// and left unchanged. The copies show in the allocations.
func TestWatchExclusiveEventObjects(t *testing.T) {
	for _, tc := range listCases() {
		for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf", "application/yaml"} {
			name := tc.name + "/" + accept
			objs := tc.lister(20, metav1.ListMeta{}).objs
			var before []runtime.Object
			for _, o := range objs {
				before = append(before, o.DeepCopyObject())
			}
			shared := newEventsWatcher(objs)
			own := &exclusiveWatcher{}
			for _, ev := range shared.events {
				own.events = append(own.events, watch.Event{Type: ev.Type, Object: ev.Object.DeepCopyObject()})
			}
			want := serveWatch(t, tc.scope(false), shared, accept)
			got := serveWatchOf(t, tc.scope(false), own, accept)
			compareResponses(t, name, got, want)
			for i := range objs {
				if !reflect.DeepEqual(objs[i], before[i]) {
					t.Errorf("%s: shared object %d changed", name, i)
				}
				if !reflect.DeepEqual(own.events[i].Object, before[i]) {
					t.Errorf("%s: the watch's own object %d was left changed", name, i)
				}
			}
			if want.code != 200 {
				continue
			}
			copied := testing.AllocsPerRun(5, func() { serveWatch(t, tc.scope(false), shared, accept) })
			inPlace := testing.AllocsPerRun(5, func() { serveWatchOf(t, tc.scope(false), own, accept) })
			if inPlace > copied-float64(len(objs)) {
				t.Errorf("%s: %.0f allocations with the watch's own objects, %.0f with copies: want at least one fewer per event", name, inPlace, copied)
			}
		}
	}
}
