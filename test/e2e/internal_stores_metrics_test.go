package e2e

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestInternalStoresHaveNoResourceSeries checks that kapi's internal
// stores, the API server leases and the NodePort allocations (no
// resources of kube-apiserver's, which keeps that data in plain etcd
// storage without a watch cache), show in no per-resource storage family
// (apiserver_resource_objects, apiserver_resource_size_estimate_bytes,
// apiserver_storage_*, apiserver_watch_cache_*, watch_cache_*,
// etcd_bookmark_total, ...), on either backend, while they still work (a
// NodePort Service gets its port; the bootstrap controller has written its
// lease). Only their etcd requests are counted, under kube-apiserver's
// names for that data: servicenodeportallocations and apiServerIPInfo (its
// lease endpoint reconciler's).
func TestInternalStoresHaveNoResourceSeries(t *testing.T) {
	internal := []string{"apiserverleases", "servicenodeportallocations", "apiServerIPInfo"}
	etcdRequests := []string{"etcd_request_duration_seconds", "etcd_requests_total", "etcd_request_errors_total"}
	for _, backend := range []string{"memory", "etcd"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var opts []kapitest.Option
			if backend == "etcd" {
				opts = append(opts, kapitest.WithEmbeddedEtcd())
			}
			srv := kapitest.Start(t, opts...)
			ctx := context.Background()
			cs := kubernetes.NewForConfigOrDie(srv.Config)
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "default"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
			got, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.Ports[0].NodePort == 0 {
				t.Fatal("no NodePort allocated")
			}
			// The kubernetes Service's endpoints come from the API server
			// leases: the bootstrap controller wrote its lease.
			eps, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(eps.Subsets) == 0 {
				t.Fatal("the kubernetes endpoints have no subsets")
			}

			seen := map[string]bool{}
			for name, mf := range scrape(t, srv.Config) {
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() != "resource" || !slices.Contains(internal, l.GetValue()) {
							continue
						}
						if !slices.Contains(etcdRequests, name) || l.GetValue() == "apiserverleases" {
							t.Errorf("%s has a series of %q", name, l.GetValue())
						}
						seen[name+"/"+l.GetValue()] = true
					}
				}
			}
			if backend == "etcd" {
				for _, want := range []string{"etcd_requests_total/servicenodeportallocations", "etcd_requests_total/apiServerIPInfo"} {
					if !seen[want] {
						t.Errorf("%s: missing (the internal stores' etcd requests are counted)", want)
					}
				}
			}
		})
	}
}
