package garbagecollector

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// objectRef identifies an object: the coordinates an owner reference
// carries, plus the namespace.
type objectRef struct {
	APIVersion string
	Kind       string
	Name       string
	UID        types.UID
	Namespace  string
}

func (r objectRef) String() string {
	return fmt.Sprintf("[%s/%s, namespace: %s, name: %s, uid: %s]", r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID)
}

// refTo is the identity an owner reference names, seen from namespace.
func refTo(o metav1.OwnerReference, namespace string) objectRef {
	return objectRef{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Namespace: namespace}
}

// matches reports whether o names exactly r's coordinates (the namespace
// aside).
func (r objectRef) matches(o metav1.OwnerReference) bool {
	return o.UID == r.UID && o.Name == r.Name && o.Kind == r.Kind && o.APIVersion == r.APIVersion
}

// node is one object of the graph. Every field is guarded by the graph's
// lock; the graph builder changes them in place.
type node struct {
	identity objectRef
	// virtual: known only from dependents' owner references, not (yet)
	// observed by a monitor.
	virtual bool
	// beingDeleted: a deletionTimestamp was observed. One way.
	beingDeleted bool
	// deletingDependents: being deleted with the foregroundDeletion
	// finalizer.
	deletingDependents bool
	owners             []metav1.OwnerReference
	dependents         map[*node]struct{}
}

// graph holds the nodes by UID. The graph builder is its only writer.
type graph struct {
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: map[types.UID]*node{}} }

// state is a consistent copy of a node's fields.
type state struct {
	identity           objectRef
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
	// current: the node is the graph's node for its UID.
	current bool
	// observed: the graph's node for the UID (this one or another) has
	// been observed.
	observed bool
}

func (g *graph) state(n *node) state {
	g.mu.RLock()
	defer g.mu.RUnlock()
	cur, ok := g.nodes[n.identity.UID]
	return state{
		identity:           n.identity,
		virtual:            n.virtual,
		beingDeleted:       n.beingDeleted,
		deletingDependents: n.deletingDependents,
		current:            ok && cur == n,
		observed:           ok && !cur.virtual,
	}
}

func (g *graph) has(uid types.UID) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.nodes[uid]
	return ok
}

// dependents returns n's dependents.
func (g *graph) dependents(n *node) []*node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*node, 0, len(n.dependents))
	for d := range n.dependents {
		out = append(out, d)
	}
	return out
}

// dependentsInfo reports whether n has dependents, and whether one of
// them is itself being deleted in the foreground.
func (g *graph) dependentsInfo(n *node) (any, deleting bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for d := range n.dependents {
		if d.deletingDependents {
			return true, true
		}
	}
	return len(n.dependents) > 0, false
}

// blockingDependents returns the dependents whose reference to n blocks
// its deletion, with whether each is itself deleting its dependents.
func (g *graph) blockingDependents(n *node) (blocking []*node, deleting []bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for d := range n.dependents {
		for _, o := range d.owners {
			if o.UID == n.identity.UID && o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion {
				blocking = append(blocking, d)
				deleting = append(deleting, d.deletingDependents)
				break
			}
		}
	}
	return blocking, deleting
}

// eventType is what a monitor (or the collector itself, for virtual
// events) saw happen to an object.
type eventType int

const (
	addEvent eventType = iota
	updateEvent
	deleteEvent
)

// event is one change for the graph builder.
type event struct {
	typ eventType
	// virtual: made by the collector (an object found not to exist),
	// not observed by a monitor.
	virtual bool
	gvk     schema.GroupVersionKind
	obj     *metav1.PartialObjectMetadata
	old     *metav1.PartialObjectMetadata
}

func (e *event) identity() objectRef {
	return objectRef{
		APIVersion: e.gvk.GroupVersion().String(),
		Kind:       e.gvk.Kind,
		Name:       e.obj.Name,
		UID:        e.obj.UID,
		Namespace:  e.obj.Namespace,
	}
}

// queues is where the graph builder sends work.
type queues interface {
	attemptToDelete(n *node)
	attemptToDeleteLater(n *node)
	attemptToOrphan(n *node)
	ownerAbsent(r objectRef)
}

// apply updates the graph with one event and queues what it makes
// actionable (upstream's processGraphChanges).
func (g *graph) apply(ev *event, q queues) {
	g.mu.Lock()
	defer g.mu.Unlock()
	obj := ev.obj
	existing, found := g.nodes[obj.UID]
	if found && !ev.virtual && existing.virtual {
		// First observation of an object known until now from references:
		// dependents that named it with other coordinates are checked
		// again (their reference may be dangling).
		observed := ev.identity()
		if observed != existing.identity {
			_, mismatched := partitionDependents(existing, observed)
			for _, d := range mismatched {
				q.attemptToDelete(d)
			}
			existing.identity = observed
		}
		existing.virtual = false
	}
	switch {
	case ev.typ != deleteEvent && !found:
		n := &node{
			identity:           ev.identity(),
			owners:             obj.OwnerReferences,
			beingDeleted:       obj.DeletionTimestamp != nil,
			deletingDependents: obj.DeletionTimestamp != nil && slices.Contains(obj.Finalizers, metav1.FinalizerDeleteDependents),
			dependents:         map[*node]struct{}{},
		}
		g.nodes[obj.UID] = n
		g.addDependentToOwners(n, n.owners, q)
		g.transitions(ev.old, obj, n, q)
	case ev.typ != deleteEvent:
		if !ev.virtual {
			existing.identity.APIVersion = ev.gvk.GroupVersion().String()
			existing.identity.Kind = ev.gvk.Kind
		}
		added, removed, changed := referencesDiffs(existing.owners, obj.OwnerReferences)
		if len(added)+len(removed)+len(changed) > 0 {
			// Owners waiting for their dependents may be unblocked.
			g.unblockedOwners(removed, changed, q)
			existing.owners = obj.OwnerReferences
			g.addDependentToOwners(existing, added, q)
			g.removeDependentFromOwners(existing, removed)
		}
		if obj.DeletionTimestamp != nil {
			existing.beingDeleted = true
		}
		g.transitions(ev.old, obj, existing, q)
	case !found:
		// Deleted before it was ever added: nothing to do.
	default:
		g.deleted(ev, existing, q)
	}
}

// deleted handles a delete event for the node existing.
func (g *graph) deleted(ev *event, existing *node, q queues) {
	if ev.virtual {
		gone := ev.identity()
		if existing.virtual {
			// The owner was checked under the coordinates gone. Dependents
			// that name it differently keep the node, under one of their
			// coordinates, to be checked again.
			matching, mismatched := partitionDependents(existing, gone)
			if len(mismatched) > 0 {
				if len(matching) > 0 {
					q.ownerAbsent(gone)
					for _, d := range matching {
						q.attemptToDelete(d)
					}
				}
				if existing.identity == gone {
					if alt := alternateIdentity(mismatched, gone); alt != nil {
						existing.identity = *alt
						q.attemptToDeleteLater(existing)
					}
				}
				return
			}
		} else if existing.identity != gone {
			// The object exists under other coordinates: only the
			// dependents that named it as gone lose it.
			matching, _ := partitionDependents(existing, gone)
			if len(matching) > 0 {
				q.ownerAbsent(gone)
				for _, d := range matching {
					q.attemptToDelete(d)
				}
			}
			return
		}
	}
	delete(g.nodes, existing.identity.UID)
	g.removeDependentFromOwners(existing, existing.owners)
	if len(existing.dependents) > 0 {
		q.ownerAbsent(ev.identity())
	}
	for d := range existing.dependents {
		q.attemptToDelete(d)
	}
	// Owners deleting their dependents check whether they are done.
	for _, o := range existing.owners {
		if on, ok := g.nodes[o.UID]; ok && on.deletingDependents {
			q.attemptToDelete(on)
		}
	}
}

// addDependentToOwners adds n to the dependents of owners, making virtual
// nodes (to be checked) for owners not in the graph.
func (g *graph) addDependentToOwners(n *node, owners []metav1.OwnerReference, q queues) {
	suspect := false
	for _, o := range owners {
		on, ok := g.nodes[o.UID]
		if !ok {
			on = &node{identity: refTo(o, n.identity.Namespace), virtual: true, dependents: map[*node]struct{}{}}
			g.nodes[o.UID] = on
		}
		on.dependents[n] = struct{}{}
		if !ok {
			q.attemptToDelete(on)
			continue
		}
		if suspect {
			continue
		}
		ownerNamespaced := on.identity.Namespace != ""
		switch {
		case ownerNamespaced && on.identity.Namespace != n.identity.Namespace:
			// A namespaced owner in another namespace cannot be n's.
			suspect = true
		case !on.identity.matches(o):
			suspect = true
		case !ownerNamespaced && n.identity.Namespace != "" && on.virtual:
			// A virtual cluster-scoped node referenced from a namespace:
			// it may be a missing namespaced owner.
			suspect = true
		}
	}
	if suspect {
		q.attemptToDelete(n)
	}
}

func (g *graph) removeDependentFromOwners(n *node, owners []metav1.OwnerReference) {
	for _, o := range owners {
		if on, ok := g.nodes[o.UID]; ok {
			delete(on.dependents, n)
		}
	}
}

// unblockedOwners queues the owners a removed or no longer blocking
// reference stopped blocking.
func (g *graph) unblockedOwners(removed []metav1.OwnerReference, changed [][2]metav1.OwnerReference, q queues) {
	for _, o := range removed {
		if blocks(o) {
			if on, ok := g.nodes[o.UID]; ok {
				q.attemptToDelete(on)
			}
		}
	}
	for _, c := range changed {
		if blocks(c[0]) && !blocks(c[1]) {
			if on, ok := g.nodes[c[1].UID]; ok {
				q.attemptToDelete(on)
			}
		}
	}
}

func blocks(o metav1.OwnerReference) bool {
	return o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion
}

// transitions queues n when its deletion starts waiting for its
// dependents: to be orphaned, or deleted first.
func (g *graph) transitions(old, obj *metav1.PartialObjectMetadata, n *node, q queues) {
	if startsWaiting(old, obj, metav1.FinalizerOrphanDependents) {
		q.attemptToOrphan(n)
		return
	}
	if startsWaiting(old, obj, metav1.FinalizerDeleteDependents) {
		n.deletingDependents = true
		for d := range n.dependents {
			q.attemptToDelete(d)
		}
		q.attemptToDelete(n)
	}
}

// startsWaiting reports whether obj is being deleted with finalizer and
// old (nil for a first observation) was not.
func startsWaiting(old, obj *metav1.PartialObjectMetadata, finalizer string) bool {
	if obj.DeletionTimestamp == nil || !slices.Contains(obj.Finalizers, finalizer) {
		return false
	}
	return old == nil || old.DeletionTimestamp == nil || !slices.Contains(old.Finalizers, finalizer)
}

// referencesDiffs compares owner references by UID.
func referencesDiffs(old, cur []metav1.OwnerReference) (added, removed []metav1.OwnerReference, changed [][2]metav1.OwnerReference) {
	oldByUID := make(map[types.UID]metav1.OwnerReference, len(old))
	for _, o := range old {
		oldByUID[o.UID] = o
	}
	for _, c := range cur {
		o, ok := oldByUID[c.UID]
		if !ok {
			added = append(added, c)
			continue
		}
		if !equality.Semantic.DeepEqual(o, c) {
			changed = append(changed, [2]metav1.OwnerReference{o, c})
		}
		delete(oldByUID, c.UID)
	}
	for _, o := range old {
		if _, left := oldByUID[o.UID]; left {
			removed = append(removed, o)
		}
	}
	return added, removed, changed
}

// partitionDependents splits owner's dependents into those whose
// reference to its UID matches ident and those with a reference that does
// not (a dependent may be in both).
func partitionDependents(owner *node, ident objectRef) (matching, mismatched []*node) {
	for d := range owner.dependents {
		match, mismatch := false, false
		if ident.Namespace != "" && d.identity.Namespace != ident.Namespace {
			mismatch = true
		} else {
			for _, o := range d.owners {
				if o.UID != ident.UID {
					continue
				}
				if ident.matches(o) {
					match = true
				} else {
					mismatch = true
				}
			}
		}
		if match {
			matching = append(matching, d)
		}
		if mismatch {
			mismatched = append(mismatched, d)
		}
	}
	return matching, mismatched
}

// alternateIdentity returns another identity deps give gone's UID: the
// first after gone in (kind, apiVersion, namespace, name) order, else the
// first; nil when there is none (upstream's getAlternateOwnerIdentity).
func alternateIdentity(deps []*node, gone objectRef) *objectRef {
	clusterScoped := gone.Namespace == ""
	seen := map[objectRef]bool{gone: true}
	var first, firstAfter *objectRef
	for _, d := range deps {
		for _, o := range d.owners {
			if o.UID != gone.UID {
				continue
			}
			if gone.matches(o) && (clusterScoped || gone.Namespace == d.identity.Namespace) {
				continue
			}
			r := refTo(o, d.identity.Namespace)
			if clusterScoped && r.APIVersion == gone.APIVersion && r.Kind == gone.Kind {
				r.Namespace = ""
			}
			if seen[r] {
				continue
			}
			seen[r] = true
			if first == nil || refLess(r, *first) {
				first = &r
			}
			if refLess(gone, r) && (firstAfter == nil || refLess(r, *firstAfter)) {
				firstAfter = &r
			}
		}
	}
	if firstAfter != nil {
		return firstAfter
	}
	return first
}

func refLess(a, b objectRef) bool {
	switch {
	case a.Kind != b.Kind:
		return a.Kind < b.Kind
	case a.APIVersion != b.APIVersion:
		return a.APIVersion < b.APIVersion
	case a.Namespace != b.Namespace:
		return a.Namespace < b.Namespace
	case a.Name != b.Name:
		return a.Name < b.Name
	default:
		return a.UID < b.UID
	}
}
