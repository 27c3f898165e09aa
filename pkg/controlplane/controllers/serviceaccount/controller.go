package serviceaccount

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// DefaultName is the ServiceAccount every namespace gets.
const DefaultName = "default"

// Controller keeps a "default" ServiceAccount in every active namespace.
type Controller struct {
	client kubernetes.Interface
	logger *slog.Logger

	namespaces       corelisters.NamespaceLister
	namespacesSynced cache.DoneChecker
	// accounts watches only the ServiceAccounts named "default".
	accounts       cache.SharedIndexInformer
	accountsLister corelisters.ServiceAccountLister
	accountsSynced cache.DoneChecker

	queue  workqueue.TypedRateLimitingInterface[string]
	synced atomic.Bool
	// syncedCh is closed when synced becomes true.
	syncedCh chan struct{}
}

// New returns a controller working from the shared namespace informer
// nsInformer (the caller starts it) and a ServiceAccount informer of its
// own, restricted to the name "default" (Run starts it).
func New(client kubernetes.Interface, nsInformer coreinformers.NamespaceInformer, logger *slog.Logger) (*Controller, error) {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Controller{
		client:   client,
		logger:   logger,
		syncedCh: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "serviceaccount"}),
	}
	c.accounts = coreinformers.NewFilteredServiceAccountInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", DefaultName).String()
		})
	c.accountsLister = corelisters.NewServiceAccountLister(c.accounts.GetIndexer())
	saHandler, err := c.accounts.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.accountDeleted})
	if err != nil {
		return nil, fmt.Errorf("serviceaccount informer: %w", err)
	}
	c.accountsSynced = saHandler.HasSyncedChecker()
	nsHandler, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.namespaceChanged,
		UpdateFunc: func(_, obj any) { c.namespaceChanged(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("namespace informer: %w", err)
	}
	c.namespaces = nsInformer.Lister()
	c.namespacesSynced = nsHandler.HasSyncedChecker()
	return c, nil
}

// HasSynced reports whether both informers are filled and the workers run.
func (c *Controller) HasSynced() bool { return c.synced.Load() }

// Synced is closed when HasSynced becomes true.
func (c *Controller) Synced() <-chan struct{} { return c.syncedCh }

// Run works until ctx ends, then returns once every goroutine it started
// has.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	wg.Go(func() { c.accounts.RunWithContext(ctx) })
	// Notified, not polled (cache.WaitForCacheSync polls every 100 ms,
	// which the server's readiness would wait on).
	if !cache.WaitFor(ctx, "", c.namespacesSynced, c.accountsSynced) {
		return
	}
	c.logger.Info("starting controller")
	c.synced.Store(true)
	close(c.syncedCh)
	// One worker, as kube-controller-manager runs it.
	wg.Go(func() {
		for c.processNext(ctx) {
		}
	})
	<-ctx.Done()
	c.logger.Info("shutting down controller")
}

func (c *Controller) namespaceChanged(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

func (c *Controller) accountDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if sa, ok := obj.(*corev1.ServiceAccount); ok && sa.Name == DefaultName {
		c.queue.Add(sa.Namespace)
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.logger.Warn("ensuring the default service account", "namespace", key, "err", err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync creates the "default" ServiceAccount of an active namespace that
// lacks it.
func (c *Controller) sync(ctx context.Context, namespace string) error {
	ns, err := c.namespaces.Get(namespace)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// Nothing is created in a terminating namespace.
	if ns.Status.Phase != corev1.NamespaceActive {
		return nil
	}
	switch _, err := c.accountsLister.ServiceAccounts(namespace).Get(DefaultName); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: namespace}}
	_, err = c.client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.logger.Debug("created the default service account", "namespace", namespace)
		return nil
	// A namespace deleted or terminating meanwhile is not an error.
	case apierrors.IsAlreadyExists(err), apierrors.IsNotFound(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil
	default:
		return fmt.Errorf("create serviceaccount %s/%s: %w", namespace, DefaultName, err)
	}
}
