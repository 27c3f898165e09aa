package app_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacher"
)

// On etcd, built-in objects are stored as protobuf under
// <etcd-prefix>/<resource>/<namespace>/<name>, and read back through the
// watch cache.
func TestEtcdStorageFactoryStoresProtobuf(t *testing.T) {
	o := app.NewOptions()
	o.DataDir = t.TempDir()
	o.SecureServing.BindPort = 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	head, err := app.CreateServerChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Destroy()
	s, stop, err := cfg.StorageFactory()(generic.StorageConfig{
		Resource:       schema.GroupResource{Resource: "configmaps"},
		StorageVersion: corev1.SchemeGroupVersion,
		Prefix:         "/configmaps",
		NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		GetAttrs:       storage.DefaultAttrs,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Data: map[string]string{"k": "v"}}
	if err := s.Create(ctx, "/configmaps/ns/a", cm, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	resp, err := cfg.StorageClient().Get(ctx, "/registry/configmaps/ns/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw etcd get: %v %v", resp, err)
	}
	if !bytes.HasPrefix(resp.Kvs[0].Value, []byte("k8s\x00")) {
		t.Fatalf("stored value is not kube protobuf: %q", resp.Kvs[0].Value[:min(20, len(resp.Kvs[0].Value))])
	}
	// resourceVersion=0 is served by the cache, which sees the write
	// through its watch shortly after.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := &corev1.ConfigMap{}
		err := s.Get(ctx, "/configmaps/ns/a", storage.GetOptions{ResourceVersion: "0"}, got)
		if err == nil && got.Data["k"] == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get through the cache: %+v %v", got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// --watch-cache-sizes: a size of 0 serves the resource straight from etcd;
// other resources keep their watch cache.
func TestWatchCacheSizes(t *testing.T) {
	o := app.NewOptions()
	o.DataDir = t.TempDir()
	o.SecureServing.BindPort = 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.WatchCache.Sizes = []string{"configmaps#0", "secrets#7"}
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	head, err := app.CreateServerChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Destroy()
	for _, tc := range []struct {
		resource string
		cached   bool
	}{{"configmaps", false}, {"secrets", true}, {"services", true}} {
		s, stop, err := cfg.StorageFactory()(generic.StorageConfig{
			Resource:       schema.GroupResource{Resource: tc.resource},
			StorageVersion: corev1.SchemeGroupVersion,
			Prefix:         "/" + tc.resource,
			NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
			NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
			GetAttrs:       storage.DefaultAttrs,
		})
		if err != nil {
			t.Fatal(err)
		}
		_, cached := s.(*cacher.Cacher)
		stop()
		if cached != tc.cached {
			t.Errorf("%s: watch cache %v, want %v", tc.resource, cached, tc.cached)
		}
	}
}
