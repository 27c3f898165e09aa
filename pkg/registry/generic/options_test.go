package generic

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// countingCodec counts the objects it encodes.
type countingCodec struct {
	runtime.Codec
	encoded *atomic.Int32
}

func (c countingCodec) Encode(obj runtime.Object, w io.Writer) error {
	c.encoded.Add(1)
	return c.Codec.Encode(obj, w)
}

func configMapStoreTemplate() *Store {
	return &Store{
		NewFunc:                  func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:              func() runtime.Object { return &corev1.ConfigMapList{} },
		DefaultQualifiedResource: schema.GroupResource{Resource: "configmaps"},
		CreateStrategy:           configMapStrategy{},
		UpdateStrategy:           configMapStrategy{},
	}
}

// NewStore asks the factory for the store's storage (its resource, the
// storage version, its key prefix or the default one, its types and
// attribute function, and no codec: built-in types use the factory's) and
// hands the factory's release function to the store.
func TestNewStoreConfiguresStorage(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	for _, tc := range []struct {
		name, keyPrefix, wantPrefix string
	}{
		{"default prefix", "", "/configmaps"},
		{"own prefix", "/elsewhere", "/elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got StorageConfig
			var destroyed atomic.Int32
			opts := RESTOptions{Storage: func(cfg StorageConfig) (storage.Interface, func(), error) {
				got = cfg
				s, _, err := MemoryStorage(b)(cfg)
				return s, func() { destroyed.Add(1) }, err
			}}
			tmpl := configMapStoreTemplate()
			tmpl.KeyPrefix = tc.keyPrefix
			tmpl.GetAttrs = storage.DefaultAttrs
			s, err := NewStore(opts, corev1.SchemeGroupVersion, tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if got.Resource != (schema.GroupResource{Resource: "configmaps"}) || got.StorageVersion != corev1.SchemeGroupVersion || got.Prefix != tc.wantPrefix {
				t.Errorf("got resource %v, version %v, prefix %q; want configmaps, v1, %q", got.Resource, got.StorageVersion, got.Prefix, tc.wantPrefix)
			}
			if got.Codec != nil || got.NewFunc == nil || got.NewListFunc == nil || got.GetAttrs == nil {
				t.Errorf("got codec %v, newFunc set %t, newListFunc set %t, getAttrs set %t; want no codec and the store's functions",
					got.Codec, got.NewFunc != nil, got.NewListFunc != nil, got.GetAttrs != nil)
			}
			if s.Logger == nil {
				t.Error("store has no logger, want the options' default")
			}
			s.Destroy()
			if n := destroyed.Load(); n != 1 {
				t.Errorf("got %d calls of the factory's release function, want 1", n)
			}
		})
	}
}

func TestNewStoreErrors(t *testing.T) {
	_, err := NewStore(RESTOptions{}, corev1.SchemeGroupVersion, configMapStoreTemplate())
	if err == nil || !strings.Contains(err.Error(), "Storage is required") {
		t.Errorf("got %v without a factory, want Storage is required", err)
	}
	boom := errors.New("boom")
	_, err = NewStore(RESTOptions{Storage: func(StorageConfig) (storage.Interface, func(), error) { return nil, nil, boom }},
		corev1.SchemeGroupVersion, configMapStoreTemplate())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "storage for configmaps") {
		t.Errorf("got %v, want the factory's error wrapped with the resource", err)
	}
	// A store that does not complete releases the storage it was given.
	var destroyed atomic.Int32
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	incomplete := configMapStoreTemplate()
	incomplete.UpdateStrategy = nil
	_, err = NewStore(RESTOptions{Storage: func(cfg StorageConfig) (storage.Interface, func(), error) {
		s, _, err := MemoryStorage(b)(cfg)
		return s, func() { destroyed.Add(1) }, err
	}}, corev1.SchemeGroupVersion, incomplete)
	if err == nil || destroyed.Load() != 1 {
		t.Errorf("got %v and %d releases for an incomplete store, want an error and 1", err, destroyed.Load())
	}
}

// MemoryStorage encodes with the config's codec when it has one (custom
// resources), with the scheme's JSON codec otherwise.
func TestMemoryStorageCodec(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	var encoded atomic.Int32
	codec := countingCodec{Codec: scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion), encoded: &encoded}
	for _, tc := range []struct {
		name  string
		codec runtime.Codec
		want  int32
	}{
		{"default codec", nil, 0},
		{"config's codec", codec, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			encoded.Store(0)
			s, destroy, err := MemoryStorage(b)(StorageConfig{
				Resource:       schema.GroupResource{Resource: "configmaps"},
				StorageVersion: corev1.SchemeGroupVersion,
				Prefix:         "/configmaps",
				Codec:          tc.codec,
				NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
				NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
			})
			if err != nil || destroy != nil {
				t.Fatalf("got release func set %t, err %v; want none and no error", destroy != nil, err)
			}
			key := "/configmaps/ns/" + strings.ReplaceAll(tc.name, " ", "-")
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Data: map[string]string{"k": "v"}}
			if err := s.Create(t.Context(), key, cm, &corev1.ConfigMap{}); err != nil {
				t.Fatal(err)
			}
			got := &corev1.ConfigMap{}
			if err := s.Get(t.Context(), key, storage.GetOptions{}, got); err != nil || got.Data["k"] != "v" {
				t.Fatalf("got %+v, %v; want the object back", got, err)
			}
			if n := encoded.Load(); n != tc.want {
				t.Errorf("config's codec encoded %d objects, want %d", n, tc.want)
			}
		})
	}
	if _, _, err := MemoryStorage(nil)(StorageConfig{}); err == nil {
		t.Error("got no error on a nil backend")
	}
}
