package e2e

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// BenchmarkAggregatorProxy compares requests to the aggregated backend
// made directly and through the front kapi's proxy (one extra TLS hop,
// identity headers, endpoint resolution): GET of one object, a list of
// 100, and watch event delivery.
//
//	go test -run XXX -bench AggregatorProxy -benchtime 2000x ./test/e2e/
func BenchmarkAggregatorProxy(b *testing.B) {
	a := startAggregation(b)
	a.register(b, a.backCAPEM)
	a.waitAvailable(b, "True", "Passed")
	eventually(b, time.Minute, "backend discovery at the front", func() error {
		_, err := a.frontCS.Discovery().ServerResourcesForGroupVersion("backend.example.com/v1")
		return err
	})
	ctx := context.Background()
	backCfg := rest.CopyConfig(a.back.Config)
	backCfg.QPS = -1
	clients := map[string]dynamic.Interface{"direct": dynamic.NewForConfigOrDie(backCfg), "proxied": a.frontDyn}

	seed := clients["direct"].Resource(gadgetGVR).Namespace("default")
	for i := range 100 {
		if _, err := seed.Create(ctx, gadget("seed-"+strconv.Itoa(i)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, path := range []string{"direct", "proxied"} {
		res := clients[path].Resource(gadgetGVR).Namespace("default")
		b.Run("get/"+path, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := res.Get(ctx, "seed-1", metav1.GetOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("list100/"+path, func(b *testing.B) {
			for b.Loop() {
				// limit: the watch benchmarks add objects as they run.
				if _, err := res.List(ctx, metav1.ListOptions{Limit: 100}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("watch/"+path, func(b *testing.B) {
			// Each iteration: one create on the backend, measured until
			// the watcher (direct or through the proxy) sees it.
			// Watch from now: no initial events, whatever earlier runs
			// (-count) left behind.
			list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			for b.Loop() {
				name := fmt.Sprintf("w-%s-%d", path, watchSeq.Add(1))
				if _, err := seed.Create(ctx, gadget(name), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				for {
					ev, ok := <-w.ResultChan()
					if !ok {
						b.Fatal("watch ended")
					}
					if u, isU := ev.Object.(*unstructured.Unstructured); isU && ev.Type == watch.Added && u.GetName() == name {
						break
					}
				}
			}
		})
	}
}

func gadget(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "backend.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"color": "blue"},
	}}
}

// watchSeq names the watch sub-benchmarks' objects uniquely across runs.
var watchSeq atomic.Int64
