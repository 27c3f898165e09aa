package cacher

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// benchEtcdBackend is cachers with their default configuration over etcd3
// stores on one embedded etcd with fsync on (kapi's default storage).
type benchEtcdBackend struct {
	srv     *embedded.Server
	cachers map[string]*Cacher
}

func (e *benchEtcdBackend) Store(t testing.TB, r storagetest.Resource) storage.Interface {
	if c, ok := e.cachers[r.Prefix]; ok {
		return c
	}
	s := etcd3.New(e.srv.Client(), etcd3.Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc, Logger: quietLogger()})
	c, err := New(Config{
		Storage: s, ResourcePrefix: r.Prefix, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc,
		GetAttrs: r.GetAttrs, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(func() { c.Stop(); logStats(t, c) })
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	e.cachers[r.Prefix] = c
	return c
}

func (e *benchEtcdBackend) Compact(ctx context.Context, t testing.TB, rev uint64) {
	t.Fatalf("benchmarks do not compact")
}

// BenchmarkStorageEtcd runs the storage benchmarks
// (storagetest.RunBenchmarks) on the watch cache over etcd3 on embedded
// etcd with fsync on. Writes go through to etcd; Get ("" = consistent),
// the consistent list and the watches are served from memory (after a
// round trip for etcd's current revision).
func BenchmarkStorageEtcd(b *testing.B) {
	storagetest.RunBenchmarks(b, func(b *testing.B) storagetest.Backend {
		srv, err := embedded.Start(context.Background(), embedded.Config{
			DataDir: filepath.Join(b.TempDir(), "etcd"), Logger: quietLogger(),
		})
		if err != nil {
			b.Fatalf("start embedded etcd: %v", err)
		}
		b.Cleanup(srv.Close)
		return &benchEtcdBackend{srv: srv, cachers: map[string]*Cacher{}}
	})
}

// BenchmarkWatchFanOutEtcd is BenchmarkWatchFanOut's "stream" case on a
// cache over etcd3 on embedded etcd (fsync off: the write's disk time is
// not what it measures): each update travels etcd's watch, the etcd3
// watch's loop and the cache's reflector before reaching the watchers,
// so the p99 from the write's start includes that hop.
func BenchmarkWatchFanOutEtcd(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", n), func(b *testing.B) {
			srv, err := embedded.Start(context.Background(), embedded.Config{
				DataDir: filepath.Join(b.TempDir(), "etcd"), Logger: quietLogger(), UnsafeNoFsync: true,
			})
			if err != nil {
				b.Fatalf("start embedded etcd: %v", err)
			}
			b.Cleanup(srv.Close)
			codec := storagetest.Codec()
			pr := storagetest.PodResource(codec)
			under := etcd3.New(srv.Client(), etcd3.Config{Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc, Logger: quietLogger()})
			c, err := New(Config{
				Storage: under, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
				GetAttrs: pr.GetAttrs, Logger: quietLogger(), WatcherBuffer: 2 * fanOutBatch,
			})
			if err != nil {
				b.Fatalf("new cacher: %v", err)
			}
			b.Cleanup(c.Stop)
			if err := c.WaitReady(b.Context()); err != nil {
				b.Fatalf("cacher not ready: %v", err)
			}
			b.ReportAllocs()
			runFanOut(b, &podEnv{t: b, ctx: b.Context(), under: under, c: c}, n, true)
		})
	}
}
