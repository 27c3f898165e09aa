package nsloop

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Loop queues namespace names and syncs them one at a time.
type Loop struct {
	logger *slog.Logger
	// doing names the work in the log line of a failed sync.
	doing string
	sync  func(ctx context.Context, namespace string) error

	queue  workqueue.TypedRateLimitingInterface[string]
	synced atomic.Bool
	// syncedCh is closed when synced becomes true.
	syncedCh chan struct{}
}

// New returns a loop whose queue is named name (the workqueue metrics
// name) and whose worker calls sync for each queued namespace; a failed
// sync is logged as "doing" and retried with the default controller rate
// limit.
func New(name, doing string, logger *slog.Logger, sync func(ctx context.Context, namespace string) error) *Loop {
	return &Loop{
		logger:   logger,
		doing:    doing,
		sync:     sync,
		syncedCh: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
	}
}

// NamespaceChanged queues the namespace obj when it is one.
func (l *Loop) NamespaceChanged(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		l.queue.Add(ns.Name)
	}
}

// ObjectChanged returns an event handler that queues the namespace of an
// object of type T named name (a deletion tombstone is unwrapped).
func ObjectChanged[T metav1.Object](l *Loop, name string) func(obj any) {
	return func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if o, ok := obj.(T); ok && o.GetName() == name {
			l.queue.Add(o.GetNamespace())
		}
	}
}

// HasSynced reports whether the informers are filled and the worker runs.
func (l *Loop) HasSynced() bool { return l.synced.Load() }

// Synced is closed when HasSynced becomes true.
func (l *Loop) Synced() <-chan struct{} { return l.syncedCh }

// Run runs the controller's own informer, waits for synced (the handlers'
// sync checkers), then runs one worker until ctx ends; it returns once
// every goroutine it started has.
func (l *Loop) Run(ctx context.Context, own cache.SharedIndexInformer, synced ...cache.DoneChecker) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer l.queue.ShutDown()
	wg.Go(func() { own.RunWithContext(ctx) })
	// Notified, not polled (cache.WaitForCacheSync polls every 100 ms,
	// which the server's readiness would wait on).
	if !cache.WaitFor(ctx, "", synced...) {
		return
	}
	l.logger.Info("starting controller")
	l.synced.Store(true)
	close(l.syncedCh)
	// One worker, as kube-controller-manager runs these controllers.
	wg.Go(func() {
		for l.processNext(ctx) {
		}
	})
	<-ctx.Done()
	l.logger.Info("shutting down controller")
}

func (l *Loop) processNext(ctx context.Context) bool {
	key, quit := l.queue.Get()
	if quit {
		return false
	}
	defer l.queue.Done(key)
	if err := l.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			l.logger.Warn(l.doing, "namespace", key, "err", err)
		}
		l.queue.AddRateLimited(key)
		return true
	}
	l.queue.Forget(key)
	return true
}
