package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// recorder is an informer event handler that remembers what it saw.
type recorder struct {
	mu      sync.Mutex
	log     []string          // "add a", "update a", "delete a" (no resyncs)
	resyncs int               // updates with an unchanged resourceVersion
	latest  map[string]string // name -> last resourceVersion seen, deleted removed
}

func newRecorder() *recorder { return &recorder{latest: map[string]string{}} }

func (r *recorder) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			cm := obj.(*corev1.ConfigMap)
			r.mu.Lock()
			defer r.mu.Unlock()
			r.log = append(r.log, "add "+cm.Name)
			r.latest[cm.Name] = cm.ResourceVersion
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
			r.mu.Lock()
			defer r.mu.Unlock()
			if o.ResourceVersion == n.ResourceVersion {
				r.resyncs++
				return
			}
			r.log = append(r.log, "update "+n.Name)
			r.latest[n.Name] = n.ResourceVersion
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			cm := obj.(*corev1.ConfigMap)
			r.mu.Lock()
			defer r.mu.Unlock()
			r.log = append(r.log, "delete "+cm.Name)
			delete(r.latest, cm.Name)
		},
	}
}

func (r *recorder) snapshot() ([]string, int, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	latest := make(map[string]string, len(r.latest))
	for k, v := range r.latest {
		latest[k] = v
	}
	return append([]string(nil), r.log...), r.resyncs, latest
}

// TestSharedInformerFactory: adds, updates and deletes reach the handler in
// order, and resyncs happen.
func TestSharedInformerFactory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		factory := informers.NewSharedInformerFactoryWithOptions(e.cs, 300*time.Millisecond, informers.WithNamespace(ns))
		defer func() {
			cancel()
			factory.Shutdown()
		}()
		inf := factory.Core().V1().ConfigMaps()
		rec := newRecorder()
		if _, err := inf.Informer().AddEventHandler(rec.handler()); err != nil {
			t.Fatal(err)
		}
		factory.Start(ctx.Done())
		for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.Fatalf("%v did not sync", typ)
			}
		}

		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		want := "[add before add a update a delete before]"
		eventually(t, 10*time.Second, "informer events", func() error {
			log, resyncs, _ := rec.snapshot()
			if fmt.Sprint(log) != want {
				return fmt.Errorf("got %v, want %s", log, want)
			}
			if resyncs < 2 {
				return fmt.Errorf("got %d resyncs, want at least 2 with a 300ms resync period", resyncs)
			}
			return nil
		})
		got, err := inf.Lister().ConfigMaps(ns).Get("a")
		if err != nil || got.Data["k"] != "v" {
			t.Errorf("lister: got %v, %v; want a with data k=v", got, err)
		}
	})
}

// TestInformerSurvivesWatchDisconnects: every watch of the informer ends
// after one second (timeoutSeconds), while objects are created, changed and
// deleted; the informer resumes each time and ends up with exactly the
// server's state, having seen every object's last version.
func TestInformerSurvivesWatchDisconnects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		var mu sync.Mutex
		watches := 0
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return cms.List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				opts.TimeoutSeconds = ptr.To[int64](1)
				mu.Lock()
				watches++
				mu.Unlock()
				return cms.Watch(ctx, opts)
			},
		}
		inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		rec := newRecorder()
		if _, err := inf.AddEventHandler(rec.handler()); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { inf.RunWithContext(ctx) })
		defer wg.Wait()
		defer cancel()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("informer did not sync")
		}

		// Write for about 3.5s, across at least three watch timeouts.
		deadline := time.Now().Add(3500 * time.Millisecond)
		for i := 0; time.Now().Before(deadline); i++ {
			name := fmt.Sprintf("cm-%d", i%20)
			_, err := cms.Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"i":"%d"}}`, i)), metav1.PatchOptions{})
			switch {
			case err == nil && i%7 == 0:
				err = cms.Delete(ctx, name, metav1.DeleteOptions{})
			case err != nil:
				_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			}
			if err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			time.Sleep(5 * time.Millisecond) // pace the writes, not an assertion
		}

		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, cm := range list.Items {
			want[cm.Name] = cm.ResourceVersion
		}
		eventually(t, 10*time.Second, "informer caught up", func() error {
			_, _, latest := rec.snapshot()
			if fmt.Sprint(latest) != fmt.Sprint(want) {
				return fmt.Errorf("handler saw %v, server has %v", latest, want)
			}
			store := map[string]string{}
			for _, obj := range inf.GetStore().List() {
				cm := obj.(*corev1.ConfigMap)
				store[cm.Name] = cm.ResourceVersion
			}
			if fmt.Sprint(store) != fmt.Sprint(want) {
				return fmt.Errorf("store has %v, server has %v", store, want)
			}
			return nil
		})
		mu.Lock()
		n := watches
		mu.Unlock()
		if n < 3 {
			t.Errorf("the informer opened %d watches, want at least 3 (one per 1s timeout)", n)
		}
	})
}
