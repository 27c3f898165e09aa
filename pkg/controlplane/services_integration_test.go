package controlplane_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestServicesThroughServer serves services, endpoints and endpointslices
// from a full server, on the memory backend and on embedded etcd (where
// the allocations sit behind a watch cache), and checks what clients see:
// discovery, the "kubernetes" Service and its endpoints, allocation and
// its errors.
func TestServicesThroughServer(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testServicesThroughServer(t, true) })
	t.Run("etcd", func(t *testing.T) { testServicesThroughServer(t, false, kapitest.WithEmbeddedEtcd()) })
}

func testServicesThroughServer(t *testing.T, recreate bool, opts ...kapitest.Option) {
	srv := kapitest.Start(t, opts...)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	core, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]metav1.APIResource{}
	for _, r := range core.APIResources {
		found[r.Name] = r
	}
	if r := found["services"]; !slices.Equal(r.ShortNames, []string{"svc"}) || !slices.Equal(r.Categories, []string{"all"}) || !r.Namespaced {
		t.Errorf("got services %+v, want short name svc, category all, namespaced", r)
	}
	if _, ok := found["services/status"]; !ok {
		t.Error("got no services/status, want it")
	}
	if r := found["endpoints"]; !slices.Equal(r.ShortNames, []string{"ep"}) {
		t.Errorf("got endpoints %+v, want short name ep", r)
	}
	disc, err := cs.Discovery().ServerResourcesForGroupVersion("discovery.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(disc.APIResources) != 1 || disc.APIResources[0].Name != "endpointslices" || disc.APIResources[0].Kind != "EndpointSlice" {
		t.Errorf("got discovery.k8s.io/v1 %+v, want endpointslices", disc.APIResources)
	}

	// The bootstrap controller has made the kubernetes service (the hook
	// ran before the server was ready).
	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.0.0.1" || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].Name != "https" {
		t.Errorf("got %+v, want 10.0.0.1:443 https", svc.Spec)
	}
	ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Subsets) != 1 || ep.Subsets[0].Addresses[0].IP != "127.0.0.1" {
		t.Errorf("got endpoints %+v, want 127.0.0.1", ep.Subsets)
	}
	kslices, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(kslices.Items) != 1 || kslices.Items[0].Endpoints[0].Addresses[0] != "127.0.0.1" {
		t.Errorf("got slices %+v, want the kubernetes slice", kslices.Items)
	}

	// A NodePort service gets an IP and a node port.
	np, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "np"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if np.Spec.ClusterIP == "" || np.Spec.ClusterIP == "10.0.0.1" || np.Spec.Ports[0].NodePort < 30000 || np.Spec.Ports[0].NodePort > 32767 {
		t.Errorf("got %s/%d, want an allocated IP and node port", np.Spec.ClusterIP, np.Spec.Ports[0].NodePort)
	}
	list, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{FieldSelector: "spec.type=NodePort"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "np" {
		t.Errorf("got %d services of type NodePort, want np", len(list.Items))
	}
	_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "out"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.9.9.9", Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.clusterIPs: Invalid value: [\"10.9.9.9\"]: failed to allocate IP 10.9.9.9: the provided network does not match the current range") {
		t.Errorf("got %v, want 422 the provided network does not match the current range", err)
	}

	if !recreate {
		return
	}
	// Deleting the kubernetes service: the bootstrap controller puts it
	// back (within its 10s period).
	if err := cs.CoreV1().Services("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pollCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		got, err := cs.CoreV1().Services("default").Get(pollCtx, "kubernetes", metav1.GetOptions{})
		if err == nil {
			if got.Spec.ClusterIP != "10.0.0.1" {
				t.Errorf("got re-created with %s, want 10.0.0.1", got.Spec.ClusterIP)
			}
			break
		}
		if !apierrors.IsNotFound(err) || pollCtx.Err() != nil {
			t.Fatalf("got %v, want the kubernetes service re-created", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
