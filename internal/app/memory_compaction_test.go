package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestMemoryBackendCompacts checks that the memory backend honours
// --etcd-compaction-interval as etcd does: a revision older than the last
// compaction is gone (410 Expired for an exact list at it), so history
// does not grow without end under writes.
func TestMemoryBackendCompacts(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--storage-backend=memory", "--etcd-compaction-interval=200ms"))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := first.ResourceVersion
	deadline := time.Now().Add(30 * time.Second)
	for i := 1; ; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: old, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return
		}
		if err != nil {
			t.Fatalf("exact list at %s: %v", old, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision %s still listable after %d writes over 30 s with a 200ms compaction interval", old, i)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
