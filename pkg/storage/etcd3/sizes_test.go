package etcd3

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// TestSizeEstimate checks the estimate against the sizes of the values in
// etcd: learnt from a list and from a watch's events (create, update,
// delete), the older of two reads never winning, keys gone from the
// current set forgotten, and upstream's 0 and -1.
func TestSizeEstimate(t *testing.T) {
	srv := startEtcd(t)
	s := New(srv.Client(), Config{
		Codec:         testCodec,
		NewFunc:       func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:   func() runtime.Object { return &corev1.ConfigMapList{} },
		Logger:        quietLogger(),
		GroupResource: schema.GroupResource{Resource: "configmaps"},
	})
	ctx := context.Background()
	if _, ok := s.EstimateSize(nil); ok {
		t.Fatal("EstimateSize before EnableSizeEstimation: got ok")
	}
	// etcdSizes returns the values' sizes under /configmaps by key.
	etcdSizes := func() map[string]int64 {
		resp, err := srv.Client().Get(ctx, s.pathPrefix+"configmaps/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, kv := range resp.Kvs {
			out["/"+strings.TrimPrefix(string(kv.Key), s.pathPrefix)] = int64(len(kv.Value))
		}
		return out
	}
	mustCreate(t, s, newCM("a", nil, map[string]string{"k": "v"}))
	mustCreate(t, s, newCM("b", nil, map[string]string{"k": strings.Repeat("x", 1000)}))
	s.EnableSizeEstimation()
	keys := []string{cmKey("a"), cmKey("b")}
	// Nothing read yet: keys without a known size are -1, none 0.
	if n, ok := s.EstimateSize(keys); !ok || n != -1 {
		t.Errorf("before any read: got %d, %v; want -1", n, ok)
	}
	if n, _ := s.EstimateSize(nil); n != 0 {
		t.Errorf("no keys: got %d, want 0", n)
	}
	// A list teaches the sizes.
	if err := s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	want := func(keys ...string) int64 {
		sizes := etcdSizes()
		var total int64
		for _, k := range keys {
			total += sizes[k]
		}
		return total / int64(len(keys)) * int64(len(keys))
	}
	if n, _ := s.EstimateSize(keys); n != want(keys...) || n < 1000 {
		t.Errorf("after a list: got %d, want %d", n, want(keys...))
	}

	// A watch's events teach new and changed values, and forget deleted ones.
	rev, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true, ResourceVersion: fmt.Sprint(rev)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	next := func(typ watch.EventType) {
		t.Helper()
		select {
		case ev := <-w.ResultChan():
			if ev.Type != typ {
				t.Fatalf("got a %s event, want %s", ev.Type, typ)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event", typ)
		}
	}
	mustCreate(t, s, newCM("c", nil, map[string]string{"k": strings.Repeat("y", 5000)}))
	next(watch.Added)
	updateData(t, s, "a", "more", strings.Repeat("z", 3000))
	next(watch.Modified)
	keys = append(keys, cmKey("c"))
	if n, _ := s.EstimateSize(keys); n != want(keys...) || n < 9000 {
		t.Errorf("after a create and an update: got %d, want %d", n, want(keys...))
	}
	// An older read (a's value at its creation) does not replace the newer.
	est := s.sizes.Load()
	before, _ := s.EstimateSize(keys)
	est.observeOne(s.pathPrefix, &mvccpb.KeyValue{Key: []byte(s.pathPrefix + "configmaps/ns/a"), Value: []byte("x"), ModRevision: 1})
	if n, _ := s.EstimateSize(keys); n != before {
		t.Errorf("after an older read: got %d, want %d", n, before)
	}
	if err := s.Delete(ctx, cmKey("b"), &corev1.ConfigMap{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	next(watch.Deleted)
	est.mu.Lock()
	_, known := est.sizes["configmaps/ns/b"]
	est.mu.Unlock()
	if known {
		t.Error("b's size is still known after its delete event")
	}
	keys = []string{cmKey("a"), cmKey("c")}
	if n, _ := s.EstimateSize(keys); n != want(keys...) {
		t.Errorf("after a delete: got %d, want %d", n, want(keys...))
	}
	// A key missing from the current set is forgotten.
	if n, _ := s.EstimateSize([]string{cmKey("c")}); n != want(cmKey("c")) {
		t.Errorf("c alone: got %d, want %d", n, want(cmKey("c")))
	}
	est.mu.Lock()
	_, known = est.sizes["configmaps/ns/a"]
	est.mu.Unlock()
	if known {
		t.Error("a's size is still known after a's key left the current set")
	}
}
