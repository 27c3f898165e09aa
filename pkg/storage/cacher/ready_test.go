package cacher

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// gatedList holds the cacher's lists until open is closed, so the cache
// stays without its initial state until then.
type gatedList struct {
	storage.Interface
	open chan struct{}
}

func (g gatedList) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Interface.GetList(ctx, key, opts, listObj)
}

// WaitReady and the requests' bounded wait share one body: both see the
// cache become ready, give up on their own terms before, and report a
// stopped cacher.
func TestWaitForReady(t *testing.T) {
	env := newPodEnv(t, envOptions{})
	open := make(chan struct{})
	c, err := New(Config{
		Storage:        gatedList{env.under, open},
		ResourcePrefix: env.c.cfg.ResourcePrefix,
		NewFunc:        env.c.cfg.NewFunc,
		NewListFunc:    env.c.cfg.NewListFunc,
		GetAttrs:       env.c.cfg.GetAttrs,
		ReadyWait:      50 * time.Millisecond,
		Logger:         quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)

	// Not ready: WaitReady ends with ctx, the requests' wait after ReadyWait
	// (or with ctx, if that ends first).
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err = c.WaitReady(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), `wait for watch cache of "/pods": `) {
		t.Fatalf("WaitReady before the first list: got %v, want the deadline, wrapped", err)
	}
	start := time.Now()
	if c.waitReady(t.Context()) {
		t.Fatal("waitReady before the first list: got true, want false")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("waitReady gave up after %v, want ReadyWait (50ms)", d)
	}
	cancelled, cancelNow := context.WithCancel(t.Context())
	cancelNow()
	if c.waitReady(cancelled) {
		t.Fatal("waitReady with a cancelled context: got true, want false")
	}

	// Ready: both return at once.
	close(open)
	wctx, wcancel := context.WithTimeout(t.Context(), waitTimeout)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		t.Fatalf("WaitReady after the first list: %v", err)
	}
	if !c.waitReady(t.Context()) {
		t.Fatal("waitReady of a ready cache: got false, want true")
	}

	// Stopped: neither waits.
	c.Stop()
	if err := c.WaitReady(t.Context()); err == nil || err.Error() != "watch cache stopped" {
		t.Fatalf("WaitReady after Stop: got %v, want watch cache stopped", err)
	}
	if c.waitReady(t.Context()) {
		t.Fatal("waitReady after Stop: got true, want false")
	}
}
