package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
)

var (
	// errVirtualDelete: the item does not exist; a virtual delete event
	// was queued for the graph builder.
	errVirtualDelete = errors.New("enqueued virtual delete event")
	// errNamespacedOwnerOfClusterScoped: a cluster-scoped object names a
	// namespaced owner, which can never be valid (retrying cannot help).
	errNamespacedOwnerOfClusterScoped = errors.New("cluster-scoped objects cannot refer to namespaced owners")
)

// orphanParallelism bounds the concurrent updates of one owner's
// dependents (upstream starts one goroutine per dependent).
const orphanParallelism = 16

// runWorkers handles q's items, at most n at once, until ctx ends or q
// shuts down, and returns once the handlers it started have. Upstream
// runs n workers per queue (--concurrent-gc-syncs, 20), each a goroutine
// waiting on the queue even when there is nothing to collect, which is
// most of the time; here one goroutine waits, and each item taken gets a
// goroutine of its own. A slot is taken before the item, so at most n
// items are out of the queue (being handled) at once, as with n workers.
func runWorkers(ctx context.Context, q workqueue.TypedInterface[*node], n int, handle func(context.Context, *node)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, n)
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		item, quit := q.Get()
		if quit {
			return
		}
		wg.Go(func() {
			defer func() { <-slots }()
			handle(ctx, item)
		})
	}
}

// deleteOne handles one item of the attemptToDelete queue.
func (gc *Collector) deleteOne(ctx context.Context, n *node) {
	if gc.attemptToDeleteWorker(ctx, n) {
		gc.deleteQ.AddRateLimited(n)
	} else {
		gc.deleteQ.Forget(n)
	}
	gc.deleteQ.Done(n)
}

// attemptToDeleteWorker processes one node of the attemptToDelete queue
// and reports whether to retry it later.
func (gc *Collector) attemptToDeleteWorker(ctx context.Context, n *node) (requeue bool) {
	st := gc.graph.state(n)
	if st.virtual && (!st.current || st.observed) {
		// A virtual node replaced meanwhile (removed, or observed): the
		// graph builder already did what checking it would do.
		return false
	}
	err := gc.attemptToDeleteItem(ctx, n, st)
	switch {
	case errors.Is(err, errVirtualDelete), errors.Is(err, errNamespacedOwnerOfClusterScoped):
		return false
	case err != nil:
		if ctx.Err() == nil {
			var mapping *meta.NoKindMatchError
			if errors.As(err, &mapping) || apierrors.IsConflict(err) {
				gc.logger.Debug("error syncing item", "item", st.identity, "err", err)
			} else {
				gc.logger.Warn("error syncing item", "item", st.identity, "err", err)
			}
		}
		return true
	}
	// A virtual node whose object exists waits to be observed (otherwise
	// a node added and removed while a watch was down could stay).
	return gc.graph.state(n).virtual
}

// attemptToDeleteItem deletes the item if it is garbage: every owner gone
// or waiting for the deletion of its dependents (upstream's
// attemptToDeleteItem).
func (gc *Collector) attemptToDeleteItem(ctx context.Context, n *node, st state) error {
	// Being deleted is a one-way trip: wait for the delete event, which
	// takes care of the dependents.
	if st.beingDeleted && !st.deletingDependents {
		return nil
	}
	latest, err := gc.getObject(ctx, st.identity, !st.virtual)
	switch {
	case apierrors.IsNotFound(err):
		gc.enqueueVirtualDelete(st.identity)
		return errVirtualDelete
	case err != nil:
		return err
	case latest.UID != st.identity.UID:
		gc.enqueueVirtualDelete(st.identity)
		return errVirtualDelete
	}
	if st.deletingDependents {
		return gc.processDeletingDependents(ctx, n, st.identity)
	}
	refs := latest.OwnerReferences
	if len(refs) == 0 {
		return nil
	}
	solid, dangling, waiting, err := gc.classifyReferences(ctx, st.identity, refs)
	if err != nil {
		return err
	}
	switch {
	case len(solid) != 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		// Owners waiting for their dependents must lose the reference too,
		// or they would wait for this item forever.
		var uids []string
		for _, r := range append(dangling, waiting...) {
			uids = append(uids, string(r.UID))
		}
		gc.logger.Debug("removing dangling and waiting owner references", "item", st.identity, "owners", uids)
		return gc.removeOwnerReferences(ctx, st.identity, append(dangling, waiting...))
	case len(waiting) != 0:
		hasDependents, dependentDeleting := gc.graph.dependentsInfo(n)
		if hasDependents {
			if dependentDeleting {
				// A dependent of the item also waits for its dependents: a
				// cycle, maybe. Make the item's references non-blocking so
				// its owners do not wait for it.
				gc.logger.Debug("unblocking owner references to break a possible cycle", "item", st.identity)
				if err := gc.unblockOwnerReferences(ctx, st.identity); err != nil {
					return err
				}
			}
			// The item blocks its owner and has dependents: delete it in
			// the foreground too.
			return gc.deleteItem(ctx, st.identity, latest, metav1.DeletePropagationForeground)
		}
		fallthrough
	default:
		// No live owner: the item is garbage. Its own finalizers say how.
		policy := metav1.DeletePropagationBackground
		switch {
		case slices.Contains(latest.Finalizers, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case slices.Contains(latest.Finalizers, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return gc.deleteItem(ctx, st.identity, latest, policy)
	}
}

// deleteItem deletes the item with policy; NotFound becomes a virtual
// delete.
func (gc *Collector) deleteItem(ctx context.Context, ref objectRef, latest *metav1.PartialObjectMetadata, policy metav1.DeletionPropagation) error {
	gc.logger.Debug("deleting item", "item", ref, "propagationPolicy", policy)
	err := gc.deleteObject(ctx, ref, latest.ResourceVersion, latest.OwnerReferences, policy)
	if apierrors.IsNotFound(err) {
		gc.enqueueVirtualDelete(ref)
		return errVirtualDelete
	}
	return err
}

// processDeletingDependents finishes a foreground deletion once no
// dependent blocks it, and queues the blocking dependents otherwise.
func (gc *Collector) processDeletingDependents(ctx context.Context, n *node, ref objectRef) error {
	blocking, deleting := gc.graph.blockingDependents(n)
	if len(blocking) == 0 {
		gc.logger.Debug("removing the foregroundDeletion finalizer", "item", ref)
		return gc.removeFinalizer(ctx, ref, metav1.FinalizerDeleteDependents)
	}
	for i, d := range blocking {
		if !deleting[i] {
			gc.deleteQ.Add(d)
		}
	}
	return nil
}

// classifyReferences sorts the item's owner references: solid (the owner
// exists and is not waiting), dangling (the owner does not exist, or has
// another UID) and waiting (the owner is being deleted in the
// foreground).
func (gc *Collector) classifyReferences(ctx context.Context, item objectRef, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, r := range refs {
		isDangling, owner, err := gc.isDangling(ctx, r, item)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case isDangling:
			dangling = append(dangling, r)
		case owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, r)
		default:
			solid = append(solid, r)
		}
	}
	return solid, dangling, waiting, nil
}

// isDangling reports whether r points at an object that does not exist
// (as item, a namespaced object, sees it); else it returns the owner.
func (gc *Collector) isDangling(ctx context.Context, r metav1.OwnerReference, item objectRef) (bool, *metav1.PartialObjectMetadata, error) {
	key := refTo(r, "")
	if _, ok := gc.absent.Get(key); ok {
		return true, nil, nil
	}
	key.Namespace = item.Namespace
	if _, ok := gc.absent.Get(key); ok {
		return true, nil, nil
	}
	gvr, namespaced, err := gc.resourceFor(r.APIVersion, r.Kind)
	if err != nil {
		return false, nil, err
	}
	if !namespaced {
		key.Namespace = ""
	}
	if namespaced && item.Namespace == "" {
		gc.logger.Debug("item is cluster-scoped, but refers to a namespaced owner", "item", item, "owner", r)
		return false, nil, errNamespacedOwnerOfClusterScoped
	}
	// An owner the cache holds with this UID exists (or existed a moment
	// ago: its deletion queues this item again). Anything else is asked.
	if owner, ok := gc.monitors.lookup(gvr, key.Namespace, r.Name); ok && owner.UID == r.UID {
		return false, owner, nil
	}
	owner, err := gc.metadata.Resource(gvr).Namespace(key.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		gc.absent.Add(key, struct{}{})
		return true, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("get owner %s: %w", key, err)
	case owner.UID != r.UID:
		gc.absent.Add(key, struct{}{})
		return true, nil, nil
	}
	return false, owner, nil
}

// orphanOne handles one item of the attemptToOrphan queue.
func (gc *Collector) orphanOne(ctx context.Context, n *node) {
	if err := gc.orphan(ctx, n); err != nil {
		if ctx.Err() == nil {
			gc.logger.Warn("orphaning dependents", "owner", gc.graph.state(n).identity, "err", err)
		}
		gc.orphanQ.AddRateLimited(n)
	} else {
		gc.orphanQ.Forget(n)
	}
	gc.orphanQ.Done(n)
}

// orphan removes the owner's reference from each of its dependents, then
// the owner's "orphan" finalizer.
func (gc *Collector) orphan(ctx context.Context, owner *node) error {
	ref := gc.graph.state(owner).identity
	deps := gc.graph.dependents(owner)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, orphanParallelism)
	)
	for _, d := range deps {
		dref := gc.graph.state(d).identity
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := gc.removeOwnerReferences(ctx, dref, []metav1.OwnerReference{{UID: ref.UID}})
			if err != nil && !apierrors.IsNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("orphan %s: %w", dref, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return gc.removeFinalizer(ctx, ref, metav1.FinalizerOrphanDependents)
}
