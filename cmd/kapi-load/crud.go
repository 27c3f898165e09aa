package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func clientFor(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1 // measure the server, not client-side throttling
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	return kubernetes.NewForConfig(cfg)
}

func tempNamespace(ctx context.Context, cs *kubernetes.Clientset, prefix string) (string, func(), error) {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, err
	}
	return ns.Name, func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) }, nil
}

// runCRUD measures create, get, update, list and delete of configmaps
// through the whole server, n operations of each at concurrency c.
func runCRUD(args []string) error {
	fs := flag.NewFlagSet("crud", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "kapi-data/admin.kubeconfig", "admin kubeconfig of the server")
	conc := fs.Int("c", 8, "concurrent workers")
	n := fs.Int("n", 2000, "operations of each kind")
	_ = fs.Parse(args)
	ctx := context.Background()
	cs, err := clientFor(*kubeconfig)
	if err != nil {
		return err
	}
	ns, cleanup, err := tempNamespace(ctx, cs, "kapi-load-")
	if err != nil {
		return err
	}
	defer cleanup()
	cms := cs.CoreV1().ConfigMaps(ns)
	objs := make([]*corev1.ConfigMap, *n)
	name := func(i int) string { return "cm-" + strconv.Itoa(i) }

	ops := []op{
		{"create", func(i int) error {
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name(i)}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
			objs[i] = cm
			return err
		}},
		{"get", func(i int) error { _, err := cms.Get(ctx, name(i), metav1.GetOptions{}); return err }},
		{"update", func(i int) error {
			cm := objs[i].DeepCopy()
			cm.Data["k"] = "v2"
			_, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}},
		{"list (100 items)", func(int) error {
			_, err := cms.List(ctx, metav1.ListOptions{Limit: 100})
			return err
		}},
		{"delete", func(i int) error { return cms.Delete(ctx, name(i), metav1.DeleteOptions{}) }},
	}
	return runOps(ops, *conc, *n)
}

// op is one kind of operation measured: do(i) is its i-th call.
type op struct {
	verb string
	do   func(i int) error
}

// runOps runs n calls of each op, in order, over conc workers, and prints
// throughput and latency percentiles per op. Any failure ends the run.
func runOps(ops []op, conc, n int) error {
	for _, op := range ops {
		lat := make([]time.Duration, n)
		var next, failures atomic.Int64
		var first atomic.Value
		var wg sync.WaitGroup
		start := time.Now()
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					t0 := time.Now()
					if err := op.do(i); err != nil {
						failures.Add(1)
						first.CompareAndSwap(nil, err.Error())
					}
					lat[i] = time.Since(t0)
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
		fmt.Printf("%-17s c=%-3d n=%d: %7.0f ops/s, p50 %v, p99 %v, failures %d\n",
			op.verb, conc, n, float64(n)/elapsed.Seconds(), lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond), failures.Load())
		if failures.Load() > 0 {
			return fmt.Errorf("%s failures, first: %v", op.verb, first.Load())
		}
	}
	return nil
}

// runWatch measures event delivery: w watchers on one namespace's
// configmaps, e creates; each event's latency is from just before its
// create was sent to its arrival at a watcher.
func runWatch(args []string) error {
	fs := flag.NewFlagSet("watch", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "kapi-data/admin.kubeconfig", "admin kubeconfig of the server")
	watchers := fs.Int("w", 1, "watchers")
	events := fs.Int("e", 500, "events (creates)")
	_ = fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := clientFor(*kubeconfig)
	if err != nil {
		return err
	}
	ns, cleanup, err := tempNamespace(ctx, cs, "kapi-watch-")
	if err != nil {
		return err
	}
	defer cleanup()
	sent := make([]time.Time, *events)
	var sentMu sync.RWMutex
	latCh := make(chan []time.Duration, *watchers)
	ready := sync.WaitGroup{}
	for w := 0; w < *watchers; w++ {
		wi, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("watch %d: %w", w, err)
		}
		ready.Add(1)
		go func(wi watch.Interface) {
			defer wi.Stop()
			latCh <- collectLatencies(wi.ResultChan(), *events, func(i int) time.Time {
				sentMu.RLock()
				defer sentMu.RUnlock()
				return sent[i]
			})
		}(wi)
		ready.Done()
	}
	ready.Wait()
	start := time.Now()
	for i := 0; i < *events; i++ {
		sentMu.Lock()
		sent[i] = time.Now()
		sentMu.Unlock()
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w-" + strconv.Itoa(i)}, Data: map[string]string{"i": strconv.Itoa(i)}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	var all []time.Duration
	for w := 0; w < *watchers; w++ {
		select {
		case l := <-latCh:
			all = append(all, l...)
		case <-ctx.Done():
			return fmt.Errorf("watchers did not receive every event: %w", ctx.Err())
		}
	}
	elapsed := time.Since(start)
	if len(all) != *watchers**events {
		return fmt.Errorf("received %d deliveries, want %d", len(all), *watchers**events)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	fmt.Printf("watch w=%d e=%d: %.0f deliveries/s, latency p50 %v, p99 %v, max %v\n",
		*watchers, *events, float64(len(all))/elapsed.Seconds(), all[len(all)/2].Round(time.Microsecond), all[len(all)*99/100].Round(time.Microsecond), all[len(all)-1].Round(time.Microsecond))
	return nil
}

// collectLatencies reads a watch of the benchmark's namespace until it
// has seen the Added events of the n ConfigMaps w-0 … w-(n-1) (or the
// channel closes) and returns each one's latency from sentAt(i). The
// namespace's own objects (its kube-root-ca.crt ConfigMap, published by
// the root CA controller) are not the benchmark's events and are skipped.
func collectLatencies(events <-chan watch.Event, n int, sentAt func(i int) time.Time) []time.Duration {
	lats := make([]time.Duration, 0, n)
	for ev := range events {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || ev.Type != watch.Added || !strings.HasPrefix(cm.Name, "w-") {
			continue
		}
		i, err := strconv.Atoi(cm.Data["i"])
		if err != nil || i < 0 || i >= n {
			continue
		}
		lats = append(lats, time.Since(sentAt(i)))
		if len(lats) == n {
			break
		}
	}
	return lats
}
