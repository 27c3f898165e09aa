package cacher

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// etcdProgressInterval is etcd's progress notification interval here: the
// cachers' catch-up after writes to other resources depends on it.
const etcdProgressInterval = 100 * time.Millisecond

// etcdBackend is cachers over etcd3 stores on one embedded etcd.
type etcdBackend struct {
	srv     *embedded.Server
	stores  []*etcd3.Store
	cachers map[string]*Cacher
}

func (b *etcdBackend) Store(t testing.TB, r storagetest.Resource) storage.Interface {
	if c, ok := b.cachers[r.Prefix]; ok {
		return c
	}
	s := etcd3.New(b.srv.Client(), etcd3.Config{
		Codec:                  r.Codec,
		NewFunc:                r.NewFunc,
		NewListFunc:            r.NewListFunc,
		Logger:                 quietLogger(),
		ProgressNotifyInterval: etcdProgressInterval,
	})
	c, err := New(Config{
		Storage:          s,
		ResourcePrefix:   r.Prefix,
		NewFunc:          r.NewFunc,
		NewListFunc:      r.NewListFunc,
		GetAttrs:         r.GetAttrs,
		BookmarkInterval: testBookmarkInterval,
		Logger:           quietLogger(),
	})
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(func() { c.Stop(); logStats(t, c) })
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	b.stores = append(b.stores, s)
	b.cachers[r.Prefix] = c
	return c
}

func (b *etcdBackend) Compact(ctx context.Context, t testing.TB, rev uint64) {
	// A cache whose own watch has not reached rev yet would lose it to
	// the compaction and re-initialize, ending its watchers: what a
	// server would do, but not what the suite's case is about. Let every
	// cache catch up first.
	for _, c := range b.cachers {
		waitCaughtUp(ctx, t, c, rev)
	}
	if err := b.stores[0].Compact(ctx, rev); err != nil {
		t.Fatalf("compact at %d: %v", rev, err)
	}
	for _, c := range b.cachers {
		c.forgetBefore(rev)
	}
}

// TestConformanceEtcd runs the suite on cachers over etcd3 on embedded
// etcd, one etcd per case.
func TestConformanceEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd per case")
	}
	storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
		srv, err := embedded.Start(context.Background(), embedded.Config{
			DataDir:                     filepath.Join(t.TempDir(), "etcd"),
			Logger:                      quietLogger(),
			UnsafeNoFsync:               true,
			WatchProgressNotifyInterval: etcdProgressInterval,
		})
		if err != nil {
			t.Fatalf("start embedded etcd: %v", err)
		}
		t.Cleanup(srv.Close)
		return &etcdBackend{srv: srv, cachers: map[string]*Cacher{}}
	})
}
