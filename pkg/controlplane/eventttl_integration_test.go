package controlplane_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// With --event-ttl=2s an event is gone a few seconds after it was
// written, as kube-apiserver's etcd lease would make it.
func TestEventTTLFlag(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.EventTTL = 2 * time.Second }))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "short-lived"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "x"},
		Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal,
	}
	if _, err := cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().Events("default").Get(ctx, "short-lived", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("event still there 30s after it was written with a 2s TTL: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
