package garbagecollector

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// recorder is a queues that records what the graph builder queued.
type recorder struct {
	deleted, later, orphaned []objectRef
	absent                   []objectRef
}

func (r *recorder) attemptToDelete(n *node)      { r.deleted = append(r.deleted, n.identity) }
func (r *recorder) attemptToDeleteLater(n *node) { r.later = append(r.later, n.identity) }
func (r *recorder) attemptToOrphan(n *node)      { r.orphaned = append(r.orphaned, n.identity) }
func (r *recorder) ownerAbsent(ref objectRef)    { r.absent = append(r.absent, ref) }

func (r *recorder) reset() { *r = recorder{} }

var (
	cmGVK     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

func obj(ns, name string, uid types.UID, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, OwnerReferences: owners}}
}

func ownerRef(gvk schema.GroupVersionKind, name string, uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, UID: uid, BlockOwnerDeletion: &block}
}

func deleting(o *metav1.PartialObjectMetadata, finalizers ...string) *metav1.PartialObjectMetadata {
	o = o.DeepCopy()
	now := metav1.Now()
	o.DeletionTimestamp = &now
	o.Finalizers = finalizers
	return o
}

func uids(refs []objectRef) []types.UID {
	var out []types.UID
	for _, r := range refs {
		out = append(out, r.UID)
	}
	slices.Sort(out)
	return out
}

func wantUIDs(t *testing.T, what string, got []objectRef, want ...types.UID) {
	t.Helper()
	slices.Sort(want)
	if g := uids(got); !slices.Equal(g, want) {
		t.Errorf("%s: got %v, want %v", what, g, want)
	}
}

func TestGraphVirtualOwnerThenObserved(t *testing.T) {
	g, q := newGraph(), &recorder{}
	dep := obj("ns", "dep", "d1", ownerRef(widgetGVK, "w", "w1", true))
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: dep}, q)
	// The owner is unknown: a virtual node is made and checked.
	wantUIDs(t, "queued after dependent add", q.deleted, "w1")
	owner := g.nodes["w1"]
	if owner == nil || !owner.virtual {
		t.Fatalf("owner node: got %+v, want a virtual node", owner)
	}
	if _, ok := owner.dependents[g.nodes["d1"]]; !ok {
		t.Error("the dependent is not among the virtual owner's dependents")
	}

	// The owner is observed: no longer virtual, nothing queued (the
	// dependent names it correctly).
	q.reset()
	g.apply(&event{typ: addEvent, gvk: widgetGVK, obj: obj("ns", "w", "w1")}, q)
	if owner.virtual {
		t.Error("owner still virtual after being observed")
	}
	wantUIDs(t, "queued after owner observed", q.deleted)

	// The owner is deleted: the dependent is queued and the owner
	// remembered as absent.
	q.reset()
	g.apply(&event{typ: deleteEvent, gvk: widgetGVK, obj: obj("ns", "w", "w1")}, q)
	wantUIDs(t, "queued after owner delete", q.deleted, "d1")
	wantUIDs(t, "absent after owner delete", q.absent, "w1")
	if g.has("w1") {
		t.Error("deleted owner still in the graph")
	}
	if got := g.nodes["d1"].owners; len(got) != 1 {
		t.Errorf("dependent owners: got %v, want its one reference kept", got)
	}
}

func TestGraphObservedWithOtherCoordinates(t *testing.T) {
	g, q := newGraph(), &recorder{}
	// The dependent names uid w1 as a ConfigMap; the object is a Widget.
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: obj("ns", "dep", "d1", ownerRef(cmGVK, "w", "w1", false))}, q)
	q.reset()
	g.apply(&event{typ: addEvent, gvk: widgetGVK, obj: obj("ns", "w", "w1")}, q)
	wantUIDs(t, "mismatched dependent queued", q.deleted, "d1")
	if got := g.nodes["w1"].identity.Kind; got != "Widget" {
		t.Errorf("identity kind: got %s, want the observed Widget", got)
	}
}

func TestGraphForegroundTransition(t *testing.T) {
	g, q := newGraph(), &recorder{}
	owner := obj("ns", "o", "o1")
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: owner}, q)
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: obj("ns", "a", "a1", ownerRef(cmGVK, "o", "o1", true))}, q)
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: obj("ns", "b", "b1", ownerRef(cmGVK, "o", "o1", false))}, q)
	q.reset()
	marked := deleting(owner, metav1.FinalizerDeleteDependents)
	g.apply(&event{typ: updateEvent, gvk: cmGVK, obj: marked, old: owner}, q)
	n := g.nodes["o1"]
	if !n.deletingDependents || !n.beingDeleted {
		t.Errorf("owner: deletingDependents %v beingDeleted %v, want both", n.deletingDependents, n.beingDeleted)
	}
	wantUIDs(t, "queued", q.deleted, "a1", "b1", "o1")
	blocking, _ := g.blockingDependents(n)
	if len(blocking) != 1 || blocking[0].identity.UID != "a1" {
		t.Errorf("blocking dependents: got %d, want only a1", len(blocking))
	}

	// The same state again (a resync) is no transition.
	q.reset()
	g.apply(&event{typ: updateEvent, gvk: cmGVK, obj: marked, old: marked}, q)
	wantUIDs(t, "queued on a repeated state", q.deleted)

	// The blocking dependent goes: the owner is queued to finish.
	q.reset()
	g.apply(&event{typ: deleteEvent, gvk: cmGVK, obj: obj("ns", "a", "a1", ownerRef(cmGVK, "o", "o1", true))}, q)
	wantUIDs(t, "queued after the blocking dependent went", q.deleted, "o1")
	if blocking, _ := g.blockingDependents(n); len(blocking) != 0 {
		t.Errorf("blocking dependents left: %d", len(blocking))
	}
}

func TestGraphOrphanTransitionAndFirstObservation(t *testing.T) {
	g, q := newGraph(), &recorder{}
	owner := obj("", "o", "o1")
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: owner}, q)
	g.apply(&event{typ: updateEvent, gvk: cmGVK, obj: deleting(owner, metav1.FinalizerOrphanDependents), old: owner}, q)
	wantUIDs(t, "orphan queue", q.orphaned, "o1")

	// Observed for the first time already waiting (a restart): queued too.
	g2, q2 := newGraph(), &recorder{}
	g2.apply(&event{typ: addEvent, gvk: cmGVK, obj: deleting(owner, metav1.FinalizerOrphanDependents)}, q2)
	wantUIDs(t, "orphan queue on first observation", q2.orphaned, "o1")
}

func TestGraphUnblockedOwnerQueued(t *testing.T) {
	g, q := newGraph(), &recorder{}
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: obj("ns", "o", "o1")}, q)
	dep := obj("ns", "d", "d1", ownerRef(cmGVK, "o", "o1", true))
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: dep}, q)
	q.reset()
	unblocked := obj("ns", "d", "d1", ownerRef(cmGVK, "o", "o1", false))
	g.apply(&event{typ: updateEvent, gvk: cmGVK, obj: unblocked, old: dep}, q)
	wantUIDs(t, "queued when its reference stopped blocking", q.deleted, "o1")
	q.reset()
	g.apply(&event{typ: updateEvent, gvk: cmGVK, obj: obj("ns", "d", "d1"), old: unblocked}, q)
	wantUIDs(t, "queued when a non-blocking reference went", q.deleted)
	if len(g.nodes["o1"].dependents) != 0 {
		t.Error("the dependent is still the owner's after its reference was removed")
	}
}

func TestGraphVirtualDeleteKeepsOtherCoordinates(t *testing.T) {
	g, q := newGraph(), &recorder{}
	// Two dependents name uid x1 with different kinds.
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: obj("ns", "a", "a1", ownerRef(cmGVK, "x", "x1", false))}, q)
	g.apply(&event{typ: addEvent, gvk: cmGVK, obj: obj("ns", "b", "b1", ownerRef(widgetGVK, "x", "x1", false))}, q)
	virtual := g.nodes["x1"]
	checked := virtual.identity
	q.reset()
	// The identity checked does not exist.
	g.apply(&event{typ: deleteEvent, virtual: true, gvk: cmGVK, obj: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: checked.Namespace, Name: checked.Name, UID: checked.UID}}}, q)
	if !g.has("x1") {
		t.Fatal("the virtual node was removed although a dependent names it differently")
	}
	wantUIDs(t, "dependents matching the absent identity", q.deleted, "a1")
	if len(q.absent) != 1 || q.absent[0].Kind != "ConfigMap" {
		t.Errorf("absent: got %v, want the ConfigMap identity", q.absent)
	}
	if got := g.nodes["x1"].identity.Kind; got != "Widget" {
		t.Errorf("node identity: got %s, want the alternate Widget", got)
	}
	wantUIDs(t, "node checked again later", q.later, "x1")
}

func TestReferencesDiffs(t *testing.T) {
	a, b, c := ownerRef(cmGVK, "a", "a", true), ownerRef(cmGVK, "b", "b", true), ownerRef(cmGVK, "c", "c", true)
	b2 := ownerRef(cmGVK, "b", "b", false)
	added, removed, changed := referencesDiffs([]metav1.OwnerReference{a, b}, []metav1.OwnerReference{b2, c})
	if len(added) != 1 || added[0].UID != "c" {
		t.Errorf("added: got %v, want c", added)
	}
	if len(removed) != 1 || removed[0].UID != "a" {
		t.Errorf("removed: got %v, want a", removed)
	}
	if len(changed) != 1 || changed[0][0].UID != "b" || *changed[0][1].BlockOwnerDeletion {
		t.Errorf("changed: got %v, want b unblocked", changed)
	}
}

func TestRelevantChange(t *testing.T) {
	base := obj("ns", "x", "u", ownerRef(cmGVK, "o", "o1", true))
	base.Finalizers = []string{"f"}
	tests := []struct {
		name   string
		change func(*metav1.PartialObjectMetadata)
		want   bool
	}{
		{"labels only", func(o *metav1.PartialObjectMetadata) { o.Labels = map[string]string{"a": "b"}; o.ResourceVersion = "9" }, false},
		{"deletion mark", func(o *metav1.PartialObjectMetadata) { now := metav1.Now(); o.DeletionTimestamp = &now }, true},
		{"finalizer", func(o *metav1.PartialObjectMetadata) { o.Finalizers = nil }, true},
		{"owner added", func(o *metav1.PartialObjectMetadata) {
			o.OwnerReferences = append(o.OwnerReferences, ownerRef(cmGVK, "p", "p1", false))
		}, true},
		{"block changed", func(o *metav1.PartialObjectMetadata) { f := false; o.OwnerReferences[0].BlockOwnerDeletion = &f }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cur := base.DeepCopy()
			tc.change(cur)
			if got := relevantChange(base, cur); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStartsWaiting(t *testing.T) {
	plain := obj("ns", "x", "u")
	fg := deleting(plain, metav1.FinalizerDeleteDependents)
	other := deleting(plain, "example.com/other")
	tests := []struct {
		name     string
		old, cur *metav1.PartialObjectMetadata
		want     bool
	}{
		{"first observation waiting", nil, fg, true},
		{"marked now", plain, fg, true},
		{"finalizer added while deleting", other, fg, true},
		{"already waiting", fg, fg, false},
		{"not deleting", nil, plain, false},
		{"other finalizer", plain, other, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := startsWaiting(tc.old, tc.cur, metav1.FinalizerDeleteDependents); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
