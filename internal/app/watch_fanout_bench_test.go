package app_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkWatchFanOut measures delivering one configmap write to 100
// watchers of its namespace (JSON over HTTP/2, the whole server chain,
// embedded etcd and its watch cache): per op, one create and 100 watch
// events encoded and sent. The watchers read raw lines (no decoding), so
// the allocations are mostly the server's: encoding each event's object
// once for all watchers (cacheable.Object) against once per watcher shows
// here.
func BenchmarkWatchFanOut(b *testing.B) {
	const watchers = 100
	srv := kapitest.Start(b, kapitest.WithEmbeddedEtcd())
	cfg := rest.CopyConfig(srv.Config)
	cfg.QPS = -1
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "fanout-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/configmaps?watch=true&resourceVersion=%s", cfg.Host, ns.Name, ns.ResourceVersion)
	events := make(chan struct{}, watchers*64)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range watchers {
		req, err := http.NewRequestWithContext(wctx, http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("watch: %s", resp.Status)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
			for sc.Scan() {
				events <- struct{}{}
			}
		})
	}
	b.Cleanup(func() { cancel(); wg.Wait() })
	data := map[string]string{}
	for i := range 20 {
		data[fmt.Sprintf("key-%02d", i)] = "a value of some length, as configuration tends to be"
	}
	cms := cs.CoreV1().ConfigMaps(ns.Name)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: data}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			<-events
		}
	}
}
