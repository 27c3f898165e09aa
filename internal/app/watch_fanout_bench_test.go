package app_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkWatchFanOut measures delivering one write to 100 watchers of
// its namespace (JSON over HTTP/2, the whole server chain): per op, one
// create and 100 watch events encoded and sent. The watchers read raw
// lines (no decoding), so the allocations are mostly the server's:
// encoding each event once for all watchers (cacheable.Object) against
// once per watcher shows here. Sub-benchmarks: the backend (embedded etcd
// with its watch cache, memory) and the resource (a configmap of 20 keys,
// a custom resource of a few hundred bytes).
func BenchmarkWatchFanOut(b *testing.B) {
	for _, backend := range []struct {
		name string
		opts []kapitest.Option
	}{
		{"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}},
		{"memory", nil},
	} {
		b.Run(backend.name, func(b *testing.B) {
			opts := append([]kapitest.Option{kapitest.WithCRDs(kapitest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{fanOutCRD()}})}, backend.opts...)
			srv := kapitest.Start(b, opts...)
			cfg := rest.CopyConfig(srv.Config)
			cfg.QPS = -1
			b.Run("configmap", func(b *testing.B) { benchFanOut(b, cfg, configMapWriter) })
			b.Run("custom", func(b *testing.B) { benchFanOut(b, cfg, customWriter) })
		})
	}
}

var fanOutGVR = schema.GroupVersionResource{Group: "fanout.kapi.dev", Version: "v1", Resource: "things"}

func fanOutCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: fanOutGVR.Resource + "." + fanOutGVR.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: fanOutGVR.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: fanOutGVR.Resource, Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// writer returns the collection path watched in namespace ns and a
// function creating its i-th object there.
type writer func(b *testing.B, cfg *rest.Config, ns string) (path string, create func(ctx context.Context, i int) error)

func configMapWriter(b *testing.B, cfg *rest.Config, ns string) (string, func(context.Context, int) error) {
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	data := map[string]string{}
	for i := range 20 {
		data[fmt.Sprintf("key-%02d", i)] = "a value of some length, as configuration tends to be"
	}
	return "/api/v1/namespaces/" + ns + "/configmaps", func(ctx context.Context, i int) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: data}, metav1.CreateOptions{})
		return err
	}
}

func customWriter(b *testing.B, cfg *rest.Config, ns string) (string, func(context.Context, int) error) {
	res := dynamic.NewForConfigOrDie(cfg).Resource(fanOutGVR).Namespace(ns)
	return "/apis/" + fanOutGVR.Group + "/v1/namespaces/" + ns + "/" + fanOutGVR.Resource, func(ctx context.Context, i int) error {
		_, err := res.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": fanOutGVR.Group + "/v1",
			"kind":       "Thing",
			"metadata":   map[string]any{"name": fmt.Sprintf("t-%d", i)},
			"spec": map[string]any{
				"n":    int64(i),
				"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding",
				"tags": []any{"a", "b", "c"},
			},
		}}, metav1.CreateOptions{})
		return err
	}
}

func benchFanOut(b *testing.B, cfg *rest.Config, write writer) {
	const watchers = 100
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "fanout-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	path, create := write(b, cfg, ns.Name)
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	url := fmt.Sprintf("%s%s?watch=true&resourceVersion=%s", cfg.Host, path, ns.ResourceVersion)
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
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := create(ctx, i); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			<-events
		}
	}
}
