package etcd3

import (
	"context"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// recordingKV records whether each Get was serializable.
type recordingKV struct {
	clientv3.KV
	mu           sync.Mutex
	serializable []bool
}

func (r *recordingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	r.mu.Lock()
	r.serializable = append(r.serializable, clientv3.OpGet(key, opts...).IsSerializable())
	r.mu.Unlock()
	return r.KV.Get(ctx, key, opts...)
}

// TestLocalReadsAreSerializable: with Config.LocalReads every read of the
// store (get, list, count, current revision, a GuaranteedUpdate's read of
// the current state, a watch's initial list) asks etcd for a serializable
// read; without, none does.
func TestLocalReadsAreSerializable(t *testing.T) {
	for _, local := range []bool{false, true} {
		srv := startEtcd(t)
		client := *srv.Client()
		rec := &recordingKV{KV: client.KV}
		client.KV = rec
		s := New(&client, Config{
			Codec:       testCodec,
			NewFunc:     func() runtime.Object { return &corev1.ConfigMap{} },
			NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} },
			Logger:      quietLogger(),
			LocalReads:  local,

			ProgressNotifyInterval: testProgressInterval,
		})
		ctx := t.Context()
		created := mustCreate(t, s, newCM("a", nil, map[string]string{"k": "v"}))
		if err := s.Get(ctx, cmKey("a"), storage.GetOptions{}, &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
		if err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Count(ctx, "/configmaps/ns"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CurrentRevision(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.GuaranteedUpdate(ctx, cmKey("a"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Data["k"] = "w"
			return cm, nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		w, err := s.Watch(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, SendInitialEvents: ptrTrue()})
		if err != nil {
			t.Fatal(err)
		}
		<-w.ResultChan()
		w.Stop()
		_ = created

		rec.mu.Lock()
		got := append([]bool(nil), rec.serializable...)
		rec.mu.Unlock()
		if len(got) < 6 {
			t.Fatalf("LocalReads=%v: %d reads recorded, want at least 6", local, len(got))
		}
		for i, ser := range got {
			if ser != local {
				t.Errorf("LocalReads=%v: read %d serializable=%v", local, i, ser)
			}
		}
	}
}

func ptrTrue() *bool { b := true; return &b }
