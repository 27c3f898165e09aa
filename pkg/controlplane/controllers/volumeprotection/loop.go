package volumeprotection

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// loop is a rate-limited queue of object keys drained by workers that run
// sync on each, once every informer the controller reads is synced.
type loop struct {
	logger *slog.Logger
	sync   func(ctx context.Context, key string) error
	queue  workqueue.TypedRateLimitingInterface[string]
	synced atomic.Bool
	// waitFor are the informers' (or their handlers') sync checkers.
	waitFor []cache.DoneChecker
}

func newLoop(name string, logger *slog.Logger, sync func(ctx context.Context, key string) error) *loop {
	if logger == nil {
		logger = slog.Default()
	}
	return &loop{
		logger: logger,
		sync:   sync,
		// kube-controller-manager's default controller rate limiter
		// (per item 5 ms to 1000 s, overall 10 qps burst 100).
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
	}
}

// HasSynced reports whether the informers were synced and the workers run.
func (l *loop) HasSynced() bool { return l.synced.Load() }

// Run runs workers until ctx ends and returns once they stopped.
func (l *loop) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer l.queue.ShutDown()
	if !cache.WaitFor(ctx, "", l.waitFor...) {
		return
	}
	l.logger.Info("starting controller")
	l.synced.Store(true)
	for range workers {
		wg.Go(func() {
			for l.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	l.logger.Info("shutting down controller")
}

func (l *loop) processNext(ctx context.Context) bool {
	key, quit := l.queue.Get()
	if quit {
		return false
	}
	defer l.queue.Done(key)
	start := time.Now()
	err := l.sync(ctx, key)
	if err == nil {
		l.queue.Forget(key)
		l.logger.Debug("processed", "key", key, "duration", time.Since(start))
		return true
	}
	if ctx.Err() == nil {
		l.logger.Warn("processing failed, retrying", "key", key, "err", err)
	}
	l.queue.AddRateLimited(key)
	return true
}
