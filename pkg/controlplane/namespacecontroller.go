package controlplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/namespace"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// namespaceController deletes the content of terminating namespaces, then
// removes the "kubernetes" finalizer and deletes the namespace — the work
// kube-controller-manager's namespace controller does for a cluster.
type namespaceController struct {
	namespaces *namespace.REST
	finalize   *namespace.FinalizeREST
	content    map[schema.GroupResource]namespaceContent
	resync     time.Duration
	logger     *slog.Logger
}

var errContentRemaining = errors.New("content remaining")

// namespaceContent is what the controller empties a namespace of.
// *generic.Store is one; services are another ([oneByOne]): deleting them
// through their own storage releases their ClusterIPs and NodePorts.
type namespaceContent interface {
	DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error)
	List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error)
}

// oneByOne empties a namespace of a resource that has no collection
// delete (services, as upstream) by deleting each object in turn.
type oneByOne struct {
	lister  rest.Lister
	deleter rest.GracefulDeleter
}

func (o oneByOne) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return o.lister.List(ctx, options)
}

func (o oneByOne) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	list, err := o.lister.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		acc, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		if _, _, err := o.deleter.Delete(ctx, acc.GetName(), deleteValidation, options.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return list, nil
}

// run reacts to namespace events and re-examines terminating namespaces
// every resync period, until ctx ends.
func (c *namespaceController) run(ctx context.Context) {
	resync := c.resync
	if resync <= 0 {
		resync = 5 * time.Second
	}
	tick := time.NewTicker(resync)
	defer tick.Stop()
	for ctx.Err() == nil {
		w, err := c.namespaces.Watch(systemContext(ctx, ""), &metainternalversion.ListOptions{})
		if err != nil {
			c.logger.Warn("watch namespaces", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		c.consume(ctx, w, tick.C)
		w.Stop()
	}
}

// consume handles one watch until it ends or ctx does.
func (c *namespaceController) consume(ctx context.Context, w watch.Interface, resync <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-resync:
			c.syncAll(ctx)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ns, isNS := ev.Object.(*corev1.Namespace); isNS && ev.Type != watch.Deleted && ns.DeletionTimestamp != nil {
				c.syncOne(ctx, ns.Name)
			}
		}
	}
}

func (c *namespaceController) syncAll(ctx context.Context) {
	list, err := c.namespaces.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		c.logger.Warn("list namespaces", "err", err)
		return
	}
	for _, ns := range list.(*corev1.NamespaceList).Items {
		if ns.DeletionTimestamp != nil {
			c.syncOne(ctx, ns.Name)
		}
	}
}

func (c *namespaceController) syncOne(ctx context.Context, name string) {
	err := c.sync(ctx, name)
	switch {
	case err == nil, apierrors.IsNotFound(err), ctx.Err() != nil:
	case errors.Is(err, errContentRemaining):
		c.logger.Debug("namespace still has content", "namespace", name)
	default:
		c.logger.Warn("namespace deletion", "namespace", name, "err", err)
	}
}

// sync empties a terminating namespace and lets it go.
func (c *namespaceController) sync(ctx context.Context, name string) error {
	obj, err := c.namespaces.Get(systemContext(ctx, ""), name, &metav1.GetOptions{})
	if err != nil {
		return err
	}
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil {
		return nil
	}
	remaining := 0
	for gr, store := range c.content {
		nctx := systemContext(ctx, name)
		if _, err := store.DeleteCollection(nctx, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{}); err != nil {
			return fmt.Errorf("delete %s in %s: %w", gr, name, err)
		}
		left, err := store.List(nctx, &metainternalversion.ListOptions{})
		if err != nil {
			return fmt.Errorf("list %s in %s: %w", gr, name, err)
		}
		if n := meta.LenList(left); n > 0 {
			remaining += n // finalizers on content keep the namespace
		}
	}
	if remaining > 0 {
		return errContentRemaining
	}
	if slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		updated := ns.DeepCopy()
		updated.Spec.Finalizers = slices.DeleteFunc(updated.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		if _, _, err := c.finalize.Update(systemContext(ctx, ""), name, updatedObject{updated}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("finalize %s: %w", name, err)
		}
	}
	_, _, err = c.namespaces.Delete(systemContext(ctx, ""), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ns.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	c.logger.Info("namespace deleted", "namespace", name)
	return nil
}

// updatedObject is an UpdatedObjectInfo that replaces the object with obj
// (keeping the current resourceVersion, so the update is conditional on
// nothing but the object having been read).
type updatedObject struct{ obj runtime.Object }

func (u updatedObject) Preconditions() *metav1.Preconditions { return nil }

func (u updatedObject) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	out := u.obj.DeepCopyObject()
	if old != nil {
		om, err := meta.Accessor(old)
		if err != nil {
			return nil, err
		}
		nm, err := meta.Accessor(out)
		if err != nil {
			return nil, err
		}
		nm.SetResourceVersion(om.GetResourceVersion())
	}
	return out, nil
}
