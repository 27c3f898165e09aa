package etcd3

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
)

// benchStore is a ConfigMap store on an embedded etcd, with fsync as in
// production unless noFsync.
func benchStore(b *testing.B, noFsync bool) *Store {
	b.Helper()
	srv, err := embedded.Start(context.Background(), embedded.Config{
		DataDir: filepath.Join(b.TempDir(), "etcd"), Logger: quietLogger(), UnsafeNoFsync: noFsync,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return New(srv.Client(), Config{
		Codec:   testCodec,
		NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
		Logger:  quietLogger(),
	})
}

func BenchmarkCreate(b *testing.B) {
	for _, fsync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			s := benchStore(b, !fsync)
			ctx := context.Background()
			var n atomic.Int64
			b.ReportAllocs()
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

func BenchmarkGet(b *testing.B) {
	s := benchStore(b, true)
	ctx := context.Background()
	if err := s.Create(ctx, cmKey("a"), newCM("a", nil, map[string]string{"k": "v"}), nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		out := &corev1.ConfigMap{}
		for pb.Next() {
			if err := s.Get(ctx, cmKey("a"), storage.GetOptions{}, out); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkUpdate(b *testing.B) {
	s := benchStore(b, false)
	ctx := context.Background()
	if err := s.Create(ctx, cmKey("a"), newCM("a", nil, map[string]string{"k": "v"}), nil); err != nil {
		b.Fatal(err)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		err := s.GuaranteedUpdate(ctx, cmKey("a"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap)
			cm.Data["k"] = fmt.Sprint(i)
			return cm, nil
		}, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			s := benchStore(b, true)
			ctx := context.Background()
			var wg sync.WaitGroup
			const workers = 16
			for w := range workers {
				wg.Go(func() {
					for i := w; i < n; i += workers {
						name := fmt.Sprintf("c%05d", i)
						if err := s.Create(ctx, cmKey(name), newCM(name, nil, map[string]string{"k": "v"}), nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportAllocs()
			for b.Loop() {
				l := &corev1.ConfigMapList{}
				if err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true}, l); err != nil {
					b.Fatal(err)
				}
				if len(l.Items) != n {
					b.Fatalf("got %d items, want %d", len(l.Items), n)
				}
			}
		})
	}
}
