package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// result is one target's figures.
type result struct {
	name                string
	start, sigterm      time.Duration // medians
	idleRSS             int64
	create, get, update float64 // per second (client-go's dynamic client)
	getRaw              float64 // gets per second read raw (rawGetter)
	list                float64 // consistent lists per second (raw GET, items counted)
	listDynamic         float64 // the same with the client-go dynamic client (items decoded)
	watch               []watchResult
	rssAfterWrites      int64
	writes              int
}

type watchResult struct {
	watchers            int
	p99                 time.Duration
	p50, p90            time.Duration // printed on stderr only
	cpuPerEvent         time.Duration
	delivered, expected int
}

const (
	benchGroup     = "bench.kapi.dev"
	benchNamespace = "bench"
	sentAnnotation = "bench.kapi.dev/sent"
)

var benchGVR = schema.GroupVersionResource{Group: benchGroup, Version: "v1", Resource: "benchthings"}

// benchCollection is the path of the benchmark's custom resources.
var benchCollection = "/apis/" + benchGVR.Group + "/" + benchGVR.Version + "/namespaces/" + benchNamespace + "/" + benchGVR.Resource

// prepare makes t's data dir and starts t once, unmeasured, so that the
// measured starts find their PKI and storage in place.
func prepare(ctx context.Context, t *target) error {
	dir, err := os.MkdirTemp("", "kapi-bench-")
	if err != nil {
		return err
	}
	t.dir = dir
	if t.prepare != nil {
		if err := t.prepare(dir); err != nil {
			return err
		}
	}
	p, err := t.start(ctx)
	if err != nil {
		return fmt.Errorf("warm-up start: %w", err)
	}
	_, err = p.stop()
	return err
}

// measureStarts starts and stops every target n times, interleaved (one
// start of each target per round), so that a change in the machine's
// load during the run weighs on every target alike; it records the medians.
func measureStarts(ctx context.Context, targets []*target, results []*result, n int) error {
	starts := make([][]time.Duration, len(targets))
	stops := make([][]time.Duration, len(targets))
	for range n {
		for i, t := range targets {
			p, err := t.start(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			d, err := p.stop()
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			starts[i], stops[i] = append(starts[i], p.ready), append(stops[i], d)
		}
	}
	for i, r := range results {
		r.start, r.sigterm = median(starts[i]), median(stops[i])
		fmt.Fprintf(os.Stderr, "== %s: start %v, SIGTERM→exit %v (medians of %d)\n", r.name, r.start, r.sigterm, n)
	}
	return nil
}

// measureLoad starts t once more and measures the idle and load rows.
func measureLoad(ctx context.Context, t *target, o options, r *result) error {
	fmt.Fprintf(os.Stderr, "== %s\n", t.name)
	p, err := t.start(ctx)
	if err != nil {
		return err
	}
	defer p.kill()
	time.Sleep(3 * time.Second) // settle
	r.idleRSS = p.rss()
	fmt.Fprintf(os.Stderr, "   idle RSS %d MiB\n", r.idleRSS>>20)
	p.dump(ctx, o.dump, t.name, "idle")
	if err := load(ctx, p, o, r, t.name); err != nil {
		return err
	}
	p.dump(ctx, o.dump, t.name, "after-writes")
	_, err = p.stop()
	return err
}

func load(ctx context.Context, p *proc, o options, r *result, name string) error {
	cs, err := kubernetes.NewForConfig(p.cfg)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(p.cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(p.cfg)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	if err := installCRD(ctx, ext, dyn); err != nil {
		return err
	}
	res := dyn.Resource(benchGVR).Namespace(benchNamespace)

	objs := make([]*unstructured.Unstructured, o.objects)
	rate, err := parallel(o.objects, o.conc, func(i int) error {
		obj, err := res.Create(ctx, thing(i), metav1.CreateOptions{})
		objs[i] = obj
		return err
	})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	r.create = rate
	if r.get, err = parallel(o.objects, o.conc, func(i int) error {
		_, err := res.Get(ctx, objs[i].GetName(), metav1.GetOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	raw, err := newRawGetter(p.cfg, benchCollection)
	if err != nil {
		return err
	}
	if r.getRaw, err = parallel(o.objects, o.conc, func(i int) error {
		return raw.get(ctx, objs[i].GetName())
	}); err != nil {
		return fmt.Errorf("get (raw): %w", err)
	}
	if r.update, err = parallel(o.objects, o.conc, func(i int) error {
		return update(ctx, res, objs, i, "")
	}); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	fmt.Fprintf(os.Stderr, "   create %.0f/s, get %.0f/s (read raw %.0f/s), update %.0f/s\n", r.create, r.get, r.getRaw, r.update)

	if err := listRows(ctx, p.cfg, res, o, r); err != nil {
		return err
	}

	for _, n := range o.watchers {
		profile := func() (wait func()) {
			return p.serverProfile(ctx, o.serverProfile, name, fmt.Sprintf("watch%d", n), o.profileSeconds)
		}
		w, err := watchRow(ctx, p, res, objs, n, o.watchEvents, profile)
		if err != nil {
			return fmt.Errorf("watch with %d watchers: %w", n, err)
		}
		r.watch = append(r.watch, w)
		fmt.Fprintf(os.Stderr, "   watch %d: p50 %v, p90 %v, p99 %v, CPU/event %v, delivered %d of %d\n", n, w.p50, w.p90, w.p99, w.cpuPerEvent, w.delivered, w.expected)
	}

	if _, err := parallel(o.writes, o.conc, func(i int) error {
		return update(ctx, res, objs, i%o.objects, "")
	}); err != nil {
		return fmt.Errorf("writes: %w", err)
	}
	time.Sleep(2 * time.Second)
	r.rssAfterWrites, r.writes = p.rss(), o.writes
	return nil
}

// locks serialize the updates of one object by the benchmark's workers
// (striped by index).
var locks [1024]sync.Mutex

// update rewrites object i from its last known state; a conflict (another
// client's write) is retried from a fresh read.
func update(ctx context.Context, res dynamic.ResourceInterface, objs []*unstructured.Unstructured, i int, sent string) error {
	locks[i%len(locks)].Lock()
	defer locks[i%len(locks)].Unlock()
	for {
		obj := objs[i].DeepCopy()
		n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "n")
		_ = unstructured.SetNestedField(obj.Object, n+1, "spec", "n")
		if sent != "" {
			a := obj.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[sentAnnotation] = sent
			obj.SetAnnotations(a)
		}
		out, err := res.Update(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			objs[i] = out
			return nil
		}
		fresh, gerr := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return err
		}
		objs[i] = fresh
	}
}

func thing(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": benchGroup + "/v1",
		"kind":       "BenchThing",
		"metadata":   map[string]any{"name": fmt.Sprintf("t%05d", i)},
		"spec": map[string]any{
			"n":    int64(0),
			"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding",
			"tags": []any{"a", "b", "c"},
		},
	}}
}

func installCRD(ctx context.Context, ext apiextensionsclient.Interface, dyn dynamic.Interface) error {
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: benchGVR.Resource + "." + benchGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: benchGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: benchGVR.Resource, Singular: "benchthing", Kind: "BenchThing", ListKind: "BenchThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create CRD: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := dyn.Resource(benchGVR).Namespace(benchNamespace).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not served within 1m", crd.Name)
}

// parallel runs fn(0..n-1) on conc workers and returns the rate per
// second; the first error stops it.
func parallel(n, conc int, fn func(i int) error) (float64, error) {
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	begin := time.Now()
	for range conc {
		wg.Go(func() {
			for firstErr.Load() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(begin).Seconds(), nil
}

// watchRow starts n watchers of the namespace, sends events updates (4 at
// a time), each stamped with its send time, and measures the delay from
// send to receipt at every watcher, and the server's CPU per delivered
// event. The watchers read the raw JSON stream (see rawWatch).
//
// profile is called just before the first update and the function it
// returns once the row is over (see serverProfile).
func watchRow(ctx context.Context, p *proc, res dynamic.ResourceInterface, objs []*unstructured.Unstructured, n, events int, profile func() (wait func())) (watchResult, error) {
	wr := watchResult{watchers: n, expected: n * events}
	l, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return wr, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	tr, err := rest.TransportFor(p.cfg)
	if err != nil {
		return wr, err
	}
	client := &http.Client{Transport: tr}
	ws := make([]*rawWatch, n)
	for i := range ws {
		if ws[i], err = startRawWatch(ctx, client, p.cfg, l.GetResourceVersion()); err != nil {
			for _, w := range ws[:i] {
				w.Close()
			}
			return wr, err
		}
	}
	lats := make([][]time.Duration, n)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for i, w := range ws {
		lats[i] = make([]time.Duration, 0, events)
		wg.Go(func() {
			defer w.Close()
			for len(lats[i]) < events {
				sent, received, err := w.next()
				if err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("watcher %d after %d events: %w", i, len(lats[i]), err))
					return
				}
				lats[i] = append(lats[i], received.Sub(sent))
			}
		})
	}
	// The watchers fill the client's HTTP/2 connection (100 streams per
	// connection on kapi and on the reference), so the first request
	// after them dials a new one. Open it now with one unstamped read:
	// otherwise the first stamped updates wait for a TCP and TLS
	// handshake on both ends, and with 200 events a row's p99 is its
	// two slowest events (session 23: the first four updates took
	// 11-13 ms instead of ~1.5).
	if _, err := res.Get(ctx, objs[0].GetName(), metav1.GetOptions{}); err != nil {
		return wr, fmt.Errorf("open the updates' connection: %w", err)
	}
	profiled := profile()
	defer profiled()
	cpu0 := p.cpu()
	if _, err := parallel(events, 4, func(i int) error {
		return update(ctx, res, objs, i%len(objs), strconv.FormatInt(time.Now().UnixNano(), 10))
	}); err != nil {
		return wr, err
	}
	wg.Wait()
	cpu := p.cpu() - cpu0
	if err, _ := firstErr.Load().(error); err != nil {
		fmt.Fprintf(os.Stderr, "   watch %d: %v\n", n, err)
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	wr.delivered = len(all)
	if len(all) > 0 {
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		wr.p50, wr.p90, wr.p99 = all[len(all)/2], all[len(all)*9/10], all[len(all)*99/100]
		wr.cpuPerEvent = cpu / time.Duration(len(all))
	}
	return wr, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// listRows measures the consistent list rows: -lists (20) sequential
// lists of the namespace's objects read raw, their items counted
// (rawList), then as many with the client-go dynamic client, which decodes
// every item. Both check that every object is listed.
func listRows(ctx context.Context, cfg *rest.Config, res dynamic.ResourceInterface, o options, r *result) error {
	lists := float64(max(o.lists, 1))
	raw, err := newRawList(cfg, benchCollection)
	if err != nil {
		return err
	}
	begin := time.Now()
	for range int(lists) {
		n, err := raw.list(ctx)
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		if n != o.objects {
			return fmt.Errorf("list: %d items, want %d", n, o.objects)
		}
	}
	r.list = lists / time.Since(begin).Seconds()
	begin = time.Now()
	for range int(lists) {
		l, err := res.List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list (dynamic client): %w", err)
		}
		if len(l.Items) != o.objects {
			return fmt.Errorf("list (dynamic client): %d items, want %d", len(l.Items), o.objects)
		}
	}
	r.listDynamic = lists / time.Since(begin).Seconds()
	fmt.Fprintf(os.Stderr, "   consistent list of %d: %.1f/s (dynamic client: %.1f/s)\n", o.objects, r.list, r.listDynamic)
	return nil
}
