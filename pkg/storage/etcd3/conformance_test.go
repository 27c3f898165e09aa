package etcd3

import (
	"context"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// TestConformance runs the storage suite on etcd3 over embedded etcd. Each
// case gets its own etcd (it starts in tens of milliseconds), so that one
// case's compaction cannot leak into the next.
func TestConformance(t *testing.T) {
	storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
		return &backend{srv: startEtcd(t), stores: map[string]*Store{}}
	})
}

// TestConformanceLocalReads runs the suite with Config.LocalReads, as kapi
// runs on its single-member embedded etcd.
func TestConformanceLocalReads(t *testing.T) {
	storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
		srv := startEtcd(t)
		if !srv.SerializableReadsLinearizable() {
			t.Fatal("a single embedded member does not report linearizable serializable reads")
		}
		return &backend{srv: srv, localReads: true, stores: map[string]*Store{}}
	})
}

type backend struct {
	srv        *embedded.Server
	localReads bool
	mu         sync.Mutex
	stores     map[string]*Store
	// benchmark: production intervals instead of the tests' short ones.
	benchmark bool
}

func (b *backend) Store(t testing.TB, r storagetest.Resource) storage.Interface {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.stores[r.Prefix]; ok {
		return s
	}
	cfg := Config{
		Codec:       r.Codec,
		NewFunc:     r.NewFunc,
		NewListFunc: r.NewListFunc,
		Logger:      quietLogger(),
		LocalReads:  b.localReads,

		ProgressNotifyInterval: testProgressInterval,
	}
	if b.benchmark {
		cfg.ProgressNotifyInterval = 0
	}
	s := New(b.srv.Client(), cfg)
	b.stores[r.Prefix] = s
	return s
}

func (b *backend) Compact(ctx context.Context, t testing.TB, rev uint64) {
	if err := compact(ctx, b.srv.Client(), int64(rev)); err != nil {
		t.Fatalf("compact at %d: %v", rev, err)
	}
}
