package controlplane_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// Deleting a namespace deletes its Services through their storage, so
// their ClusterIPs are free again as soon as the namespace is gone (not
// only after the allocation repair, minutes later). The range is small
// enough that the first namespace's services fill it.
func TestNamespaceDeletionReleasesServiceIPs(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.ServiceClusterIPRange = "10.0.0.0/29" // .1 is kubernetes', .2-.6 are free
	}))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	fill := func(ns string) error {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		for i := range 5 {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("service %d in %s: %w", i, ns, err)
			}
		}
		return nil
	}
	if err := fill("first"); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CoreV1().Services("first").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "extra"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) {
		t.Fatalf("a sixth service: got %v, want the range-is-full error", err)
	}

	if err := cs.CoreV1().Namespaces().Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "first", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace first not gone within 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := fill("second"); err != nil {
		t.Errorf("after the first namespace went: %v (its services' IPs were not released)", err)
	}
}
