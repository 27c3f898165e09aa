package kapitest_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkGetUpdateCR runs kapi-bench's get and update rows (cmd/kapi-bench
// rows.go: client-go's dynamic client, custom resources of ~400 bytes
// with a x-kubernetes-preserve-unknown-fields schema, 32 concurrent
// workers, an update from the last known object, a conflict retried from
// a fresh get) against a server on embedded etcd, through real HTTPS.
// Client and server share the process: allocs/op and cpu-us (the process's
// CPU time per operation) include the client's, which is the same code
// before and after a server change.
func BenchmarkGetUpdateCR(b *testing.B) {
	s, err := kapitest.StartE(b.TempDir(), slog.New(slog.DiscardHandler), kapitest.WithEmbeddedEtcd())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop() })
	ctx := context.Background()
	cfg := *s.Config
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(&cfg)
	ext := apiextensionsclient.NewForConfigOrDie(&cfg)
	dyn := dynamic.NewForConfigOrDie(&cfg)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "bench.kapi.dev", Version: "v1", Resource: "benchthings"}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "benchthings.bench.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvr.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "benchthings", Singular: "benchthing", Kind: "BenchThing", ListKind: "BenchThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	res := dyn.Resource(gvr).Namespace("bench")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := res.List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			break
		} else if time.Now().After(deadline) {
			b.Fatal(err)
		}
	}
	const objects = 500
	objs := make([]*unstructured.Unstructured, objects)
	var mu [objects]sync.Mutex
	for i := range objs {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
			"metadata": map[string]any{"name": fmt.Sprintf("t%05d", i)},
			"spec": map[string]any{"n": int64(0),
				"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding",
				"tags": []any{"a", "b", "c"}},
		}}
		if objs[i], err = res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	// get-first: each GET is the first of its object since it was written
	// (no kept encoding yet), as in kapi-bench's get row, which reads each
	// of the objects it just created once; prepare creates them untimed.
	var firsts []string
	var round atomic.Int64
	rows := []struct {
		name    string
		prepare func(n int) error
		op      func(i int) error
	}{
		{"get", nil, func(i int) error {
			_, err := res.Get(ctx, objs[i%objects].GetName(), metav1.GetOptions{})
			return err
		}},
		{"get-first", func(n int) error {
			r := round.Add(1)
			firsts = make([]string, n)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Value
			for range 32 {
				wg.Go(func() {
					for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
						u := objs[0].DeepCopy()
						u.SetName(fmt.Sprintf("f%d-%06d", r, i))
						u.SetResourceVersion("")
						u.SetUID("")
						u.SetManagedFields(nil)
						u.SetCreationTimestamp(metav1.Time{})
						if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
							failed.CompareAndSwap(nil, err)
							return
						}
						firsts[i] = u.GetName()
					}
				})
			}
			wg.Wait()
			if err, _ := failed.Load().(error); err != nil {
				return err
			}
			return nil
		}, func(i int) error {
			_, err := res.Get(ctx, firsts[i], metav1.GetOptions{})
			return err
		}},
		{"update", nil, func(i int) error {
			i %= objects
			mu[i].Lock()
			defer mu[i].Unlock()
			for {
				obj := objs[i].DeepCopy()
				n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "n")
				_ = unstructured.SetNestedField(obj.Object, n+1, "spec", "n")
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
		}},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0))) // 32 workers, as kapi-bench's -c
			if row.prepare != nil {
				if err := row.prepare(b.N); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := row.op(int(next.Add(1) - 1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}
