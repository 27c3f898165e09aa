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
	srv        *embedded.Server
	localReads bool // etcd3.Config.LocalReads, as kapi sets it on embedded etcd
	stores     []*etcd3.Store
	cachers    map[string]*Cacher
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
		LocalReads:             b.localReads,
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

// CacheFormTokens implements storagetest.CacheTokens: the cachers' pages
// carry the watch cache's form of continue token.
func (b *etcdBackend) CacheFormTokens() bool { return true }

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
// etcd, one etcd per case: with linearizable reads (as on an external
// etcd) and with the serializable reads kapi uses on its single-member
// embedded etcd (etcd3.Config.LocalReads).
func TestConformanceEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd per case")
	}
	for _, localReads := range []bool{false, true} {
		name := "linearizable"
		if localReads {
			name = "localReads"
		}
		t.Run(name, func(t *testing.T) {
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
				if localReads && !srv.SerializableReadsLinearizable() {
					t.Fatal("a single embedded member does not report linearizable serializable reads")
				}
				return &etcdBackend{srv: srv, localReads: localReads, cachers: map[string]*Cacher{}}
			})
		})
	}
}
