package serviceaccount

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/internal/nsloop"
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

	loop *nsloop.Loop
}

// New returns a controller working from the shared namespace informer
// nsInformer (the caller starts it) and a ServiceAccount informer of its
// own, restricted to the name "default" (Run starts it).
func New(client kubernetes.Interface, nsInformer coreinformers.NamespaceInformer, logger *slog.Logger) (*Controller, error) {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Controller{client: client, logger: logger}
	c.loop = nsloop.New("serviceaccount", "ensuring the default service account", logger, c.sync)
	c.accounts = coreinformers.NewFilteredServiceAccountInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", DefaultName).String()
		})
	c.accountsLister = corelisters.NewServiceAccountLister(c.accounts.GetIndexer())
	saHandler, err := c.accounts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: nsloop.ObjectChanged[*corev1.ServiceAccount](c.loop, DefaultName),
	})
	if err != nil {
		return nil, fmt.Errorf("serviceaccount informer: %w", err)
	}
	c.accountsSynced = saHandler.HasSyncedChecker()
	nsHandler, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.NamespaceChanged,
		UpdateFunc: func(_, obj any) { c.loop.NamespaceChanged(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("namespace informer: %w", err)
	}
	c.namespaces = nsInformer.Lister()
	c.namespacesSynced = nsHandler.HasSyncedChecker()
	return c, nil
}

// HasSynced reports whether both informers are filled and the worker runs.
func (c *Controller) HasSynced() bool { return c.loop.HasSynced() }

// Synced is closed when HasSynced becomes true.
func (c *Controller) Synced() <-chan struct{} { return c.loop.Synced() }

// Run works until ctx ends, then returns once every goroutine it started
// has.
func (c *Controller) Run(ctx context.Context) {
	c.loop.Run(ctx, c.accounts, c.namespacesSynced, c.accountsSynced)
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
