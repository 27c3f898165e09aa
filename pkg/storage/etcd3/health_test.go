package etcd3

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zapcore"

	"github.com/kapi-dev/kapi/pkg/storage/embedded"
)

func TestHealthCheck(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()

	var client atomic.Pointer[clientv3.Client]
	const timeout = time.Second
	check := NewHealthCheck(client.Load, "", timeout)

	if err := check(ctx); err == nil || err.Error() != "etcd client connection not yet established" {
		t.Fatalf("before the client exists: got %v, want not yet established", err)
	}

	// A client of its own, so closing it makes probes fail.
	c, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 5 * time.Second,
		Logger: embedded.NewZapLogger(quietLogger(), zapcore.ErrorLevel)})
	if err != nil {
		t.Fatal(err)
	}
	client.Store(c)
	probed := time.Now()
	if err := check(ctx); err != nil {
		t.Fatalf("healthy etcd: got %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Inside timeout/2 the previous result is returned without a probe.
	err = check(ctx)
	if time.Since(probed) < timeout/2 && err != nil {
		t.Errorf("inside the rate-limit window: got %v, want the previous (nil) result", err)
	}
	// After the window, a real probe sees the closed client.
	deadline := time.Now().Add(10 * time.Second)
	for check(ctx) == nil {
		if time.Now().After(deadline) {
			t.Fatal("probe still passing with a closed client")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCompactor(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	c := srv.Client()
	if _, err := c.Put(ctx, "/k", "1"); err != nil {
		t.Fatal(err)
	}
	first, err := c.Put(ctx, "/k", "2")
	if err != nil {
		t.Fatal(err)
	}
	stop := StartCompactor(ctx, c, 20*time.Millisecond, quietLogger())
	defer stop()
	// Keep writing; the compactor compacts at the revision seen one tick
	// earlier, so the first revisions become unreadable.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := c.Put(ctx, "/k", "x"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Get(ctx, "/k", clientv3.WithRev(first.Header.Revision))
		if err != nil {
			if !errors.Is(err, rpctypes.ErrCompacted) {
				t.Fatalf("got %v, want compacted", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("revision not compacted within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	resp, err := c.Get(ctx, compactRevKey)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Version < 2 {
		t.Errorf("got %v, %v; want %s with a version of at least 2", resp, err, compactRevKey)
	}
}

// Callers arriving while the first probe is in flight must get its result,
// not a stale "not yet established".
func TestHealthCheckConcurrentFirstCalls(t *testing.T) {
	srv := startEtcd(t)
	check := NewHealthCheck(func() *clientv3.Client { return srv.Client() }, "/registry", 2*time.Second)
	errs := make(chan error, 32)
	var start sync.WaitGroup
	start.Add(1)
	for i := 0; i < cap(errs); i++ {
		go func() {
			start.Wait()
			errs <- check(context.Background())
		}()
	}
	start.Done()
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent first call %d: got %v, want nil", i, err)
		}
	}
}
