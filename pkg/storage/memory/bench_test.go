package memory

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func benchPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "bench"}},
		Spec:       corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func BenchmarkCreate(b *testing.B) {
	s := podStore(newTestBackend(b, testConfig()))
	ctx := context.Background()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("p%d", i)
		i++
		if err := s.Create(ctx, "/pods/ns/"+name, benchPod("ns", name), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := podStore(newTestBackend(b, testConfig()))
	createPods(b, s, "ns", 1)
	ctx := context.Background()
	for b.Loop() {
		if err := s.Get(ctx, "/pods/ns/p0000", storage.GetOptions{}, &corev1.Pod{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkList1000(b *testing.B) {
	s := podStore(newTestBackend(b, testConfig()))
	createPods(b, s, "ns", 1000)
	ctx := context.Background()
	for b.Loop() {
		l := &corev1.PodList{}
		if err := s.GetList(ctx, "/pods", storage.ListOptions{Recursive: true}, l); err != nil {
			b.Fatal(err)
		}
		if len(l.Items) != 1000 {
			b.Fatalf("%d items", len(l.Items))
		}
	}
}

// BenchmarkWatchFanOut100 measures one write delivered to 100 watchers: each
// iteration is one create, and it ends when every watcher has received it.
func BenchmarkWatchFanOut100(b *testing.B) {
	const watchers = 100
	cfg := testConfig()
	cfg.WatchBufferSize = 1 << 16
	s := podStore(newTestBackend(b, cfg))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan struct{}, watchers)
	var wg sync.WaitGroup
	for range watchers {
		w, err := s.Watch(ctx, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for range w.ResultChan() {
				got <- struct{}{}
			}
		})
	}
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("p%d", i)
		i++
		if err := s.Create(ctx, "/pods/ns/"+name, benchPod("ns", name), nil); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			<-got
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*watchers), "ns/delivery")
	cancel()
	wg.Wait()
}
