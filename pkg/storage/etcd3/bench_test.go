package etcd3

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// benchEtcd starts an embedded etcd with fsync as in production unless
// noFsync, with etcd's default progress notification interval.
func benchEtcd(b *testing.B, noFsync bool) *embedded.Server {
	b.Helper()
	srv, err := embedded.Start(context.Background(), embedded.Config{
		DataDir: filepath.Join(b.TempDir(), "etcd"), Logger: quietLogger(), UnsafeNoFsync: noFsync,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkStorage runs the storage benchmarks (storagetest.RunBenchmarks)
// on etcd3 stores over embedded etcd, with fsync on (the default, durable)
// and off (tests only), and with fsync on and Config.LocalReads (as kapi
// runs on its embedded etcd).
func BenchmarkStorage(b *testing.B) {
	for _, c := range []struct {
		fsync, localReads bool
	}{{true, false}, {false, false}, {true, true}} {
		name := fmt.Sprintf("fsync=%v", c.fsync)
		if c.localReads {
			name += ",localReads"
		}
		b.Run(name, func(b *testing.B) {
			storagetest.RunBenchmarks(b, func(b *testing.B) storagetest.Backend {
				return &backend{srv: benchEtcd(b, !c.fsync), localReads: c.localReads, stores: map[string]*Store{}, benchmark: true}
			})
		})
	}
}

// BenchmarkCreateParallel measures create throughput with many writers
// (etcd commits concurrent writes with one fsync).
func BenchmarkCreateParallel(b *testing.B) {
	for _, fsync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			s := New(benchEtcd(b, !fsync).Client(), Config{
				Codec:   testCodec,
				NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
				Logger:  quietLogger(),
			})
			ctx := context.Background()
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					name := fmt.Sprintf("c%d", n.Add(1))
					if err := s.Create(ctx, cmKey(name), newCM(name, nil, map[string]string{"k": "v"}), nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
