package certificates

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

var everything = labels.Everything()

// handler handles one CSR (a copy the handler may change).
type handler func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error

// Controller runs a handler on every CSR added or changed, as upstream's
// CertificateController does; optionally it also handles every CSR each
// resync period (the cleaner's polling).
type Controller struct {
	name    string
	client  kubernetes.Interface
	logger  *slog.Logger
	handle  handler
	lister  certlisters.CertificateSigningRequestLister
	hSynced cache.DoneChecker
	poll    time.Duration
	queue   workqueue.TypedRateLimitingInterface[string]
	synced  atomic.Bool
}

// newController builds a controller on csrs, the informer it shares with the
// other CSR controllers (upstream's controllers share the controller
// manager's one); its owner starts it.
func newController(name string, client kubernetes.Interface, csrs certinformers.CertificateSigningRequestInformer, logger *slog.Logger, poll time.Duration, h handler, onEvents bool) (*Controller, error) {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Controller{
		name:   name,
		client: client,
		logger: logger,
		handle: h,
		poll:   poll,
	}
	// Upstream's per-item exponential backoff (200ms to 1000s).
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 1000*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	c.lister = csrs.Lister()
	if !onEvents {
		// Only the lister is read: no handler (and no per-handler buffer).
		c.hSynced = csrs.Informer().HasSyncedChecker()
		return c, nil
	}
	reg, err := csrs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("%s: csr informer: %w", name, err)
	}
	c.hSynced = reg.HasSyncedChecker()
	return c, nil
}

func (c *Controller) enqueue(obj any) {
	if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
		c.queue.Add(csr.Name)
	}
}

// HasSynced reports whether the controller has seen every CSR once.
func (c *Controller) HasSynced() bool { return c.synced.Load() }

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	if !cache.WaitFor(ctx, "", c.hSynced) { // notified, not polled
		return
	}
	c.logger.Info("starting controller")
	c.synced.Store(true)
	for range 2 {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	if c.poll > 0 {
		wg.Go(func() {
			t := time.NewTicker(c.poll)
			defer t.Stop()
			for {
				c.enqueueAll()
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	<-ctx.Done()
	c.logger.Info("shutting down controller")
}

func (c *Controller) enqueueAll() {
	csrs, err := c.lister.List(everything)
	if err != nil {
		c.logger.Warn("listing certificate signing requests", "err", err)
		return
	}
	for _, csr := range csrs {
		c.queue.Add(csr.Name)
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		c.queue.Forget(name)
		return true
	}
	if err == nil {
		err = c.handle(ctx, csr.DeepCopy())
	}
	if err != nil {
		var ignorable ignorableError
		switch {
		case ctx.Err() != nil:
		case errors.As(err, &ignorable):
			c.logger.Debug("syncing certificate signing request", "name", name, "err", err)
		default:
			c.logger.Warn("syncing certificate signing request", "name", name, "err", err)
		}
		c.queue.AddRateLimited(name)
		return true
	}
	c.queue.Forget(name)
	return true
}
