package controlplane_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkServiceCreate times a ClusterIP Service create through the
// whole stack (TLS, client-go JSON, the services REST): one IPAddress
// written by the allocator (after it lists the ServiceCIDRs) and the
// Service, on each backend. The range is a /16, so that the allocator's
// random picks seldom collide.
func BenchmarkServiceCreate(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchServiceCreate(b) })
	b.Run("etcd", func(b *testing.B) { benchServiceCreate(b, kapitest.WithEmbeddedEtcd()) })
}

func benchServiceCreate(b *testing.B, opts ...kapitest.Option) {
	srv := kapitest.Start(b, append(opts, kapitest.WithFlags("--service-cluster-ip-range=10.96.0.0/16"))...)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "bench"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CoreV1().Services("default").Create(b.Context(), svc, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
