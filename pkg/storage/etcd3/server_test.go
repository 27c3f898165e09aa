package etcd3

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// testProgressInterval is etcd's progress notification interval in tests.
const testProgressInterval = 250 * time.Millisecond

// startEtcd starts an embedded etcd for one test (fsync off), closed by
// t.Cleanup.
func startEtcd(t testing.TB) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(context.Background(), embedded.Config{
		DataDir:                     filepath.Join(t.TempDir(), "etcd"),
		Logger:                      quietLogger(),
		UnsafeNoFsync:               true,
		WatchProgressNotifyInterval: testProgressInterval,
	})
	if err != nil {
		t.Fatalf("start embedded etcd: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

var testCodec = func() runtime.Codec {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(scheme).LegacyCodec(corev1.SchemeGroupVersion)
}()

// newTestStore returns a store of ConfigMaps on a fresh embedded etcd.
func newTestStore(t testing.TB) (*Store, *embedded.Server) {
	t.Helper()
	srv := startEtcd(t)
	return New(srv.Client(), Config{
		Codec:       testCodec,
		NewFunc:     func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} },
		Logger:      quietLogger(),

		ProgressNotifyInterval: testProgressInterval,
	}), srv
}

// configMapStoreWithMetrics is a Store of ConfigMaps on a fresh embedded
// etcd, named resource in its metrics, which it records in reg.
func configMapStoreWithMetrics(t *testing.T, resource string) (*prometheus.Registry, *embedded.Server, *Store) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	srv := startEtcd(t)
	return reg, srv, New(srv.Client(), Config{
		Codec:         testCodec,
		NewFunc:       func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:   func() runtime.Object { return &corev1.ConfigMapList{} },
		Logger:        quietLogger(),
		GroupResource: schema.GroupResource{Resource: resource},
		Metrics:       m,
	})
}
