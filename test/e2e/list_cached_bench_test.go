package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
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
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkListCustomResources2000 is kapi-bench's list row in one
// process: a consistent list of 2,000 custom resources of ~400 bytes (the
// same objects) from a real server on embedded etcd (served from the watch
// cache) and on the memory backend, read raw (a GET over client-go's
// transport, gzip asked for as Go's transport does, items counted) and
// with client-go's dynamic client (every item decoded). ns/op, B/op and
// allocs/op are the whole process's: server and client.
//
//	go test -run '^$' -bench BenchmarkListCustomResources2000 -benchmem ./test/e2e/
func BenchmarkListCustomResources2000(b *testing.B) {
	for _, backend := range []struct {
		name string
		opts []kapitest.Option
	}{{"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}}, {"memory", nil}} {
		b.Run(backend.name, func(b *testing.B) {
			dir := b.TempDir()
			srv, err := kapitest.StartE(dir, slog.New(slog.DiscardHandler), backend.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					b.Error(err)
				}
				_ = os.RemoveAll(dir)
			}()
			cfg := rest.CopyConfig(srv.Config)
			cfg.QPS = -1
			res := fillBenchThings(b, cfg, 2000)
			tr, err := rest.TransportFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			client := &http.Client{Transport: tr}
			url := cfg.Host + "/apis/bench.e2e.kapi.dev/v1/namespaces/bench/benchthings"
			b.Run("raw", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req, _ := http.NewRequest(http.MethodGet, url, nil)
					req.Header.Set("Accept", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					body, err := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK {
						b.Fatalf("list: %v %d", err, resp.StatusCode)
					}
					if n := bytes.Count(body, []byte(`"kind":"BenchThing"`)); n != 2000 {
						b.Fatalf("listed %d items", n)
					}
				}
			})
			b.Run("dynamic", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					l, err := res.List(context.Background(), metav1.ListOptions{})
					if err != nil || len(l.Items) != 2000 {
						b.Fatalf("list: %v", err)
					}
				}
			})
		})
	}
}

// fillBenchThings makes kapi-bench's CRD and n of its objects (16 writers)
// in namespace bench.
func fillBenchThings(b *testing.B, cfg *rest.Config, n int) dynamic.ResourceInterface {
	b.Helper()
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: "bench.e2e.kapi.dev", Version: "v1", Resource: "benchthings"}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: gvr.Resource + "." + gvr.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvr.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: gvr.Resource, Singular: "benchthing", Kind: "BenchThing", ListKind: "BenchThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	if _, err := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	res := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace("bench")
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := res.List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			break
		} else if time.Now().After(deadline) {
			b.Fatalf("CRD not served: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				_, err := res.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": gvr.GroupVersion().String(), "kind": "BenchThing",
					"metadata": map[string]any{"name": fmt.Sprintf("t%05d", i)},
					"spec": map[string]any{"n": int64(0), "tags": []any{"a", "b", "c"},
						"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding"},
				}}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return res
}
