package nsloop

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The handlers queue the namespace of the named object only (tombstones
// unwrapped) and the name of a namespace.
func TestHandlersQueue(t *testing.T) {
	l := New("test", "testing", quiet(), func(context.Context, string) error { return nil })
	defer l.queue.ShutDown()
	changed := ObjectChanged[*corev1.ConfigMap](l, "x")
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	changed(&corev1.ConfigMap{ObjectMeta: meta("a", "x")})
	changed(cache.DeletedFinalStateUnknown{Key: "b/x", Obj: &corev1.ConfigMap{ObjectMeta: meta("b", "x")}})
	changed(&corev1.ConfigMap{ObjectMeta: meta("c", "other")})
	changed(&corev1.Secret{ObjectMeta: meta("d", "x")})
	l.NamespaceChanged(&corev1.Namespace{ObjectMeta: meta("", "e")})
	l.NamespaceChanged(&corev1.ConfigMap{ObjectMeta: meta("f", "x")})
	var got []string
	for l.queue.Len() > 0 {
		k, _ := l.queue.Get()
		got = append(got, k)
		l.queue.Done(k)
	}
	slices.Sort(got)
	if want := []string{"a", "b", "e"}; !slices.Equal(got, want) {
		t.Errorf("queued %v, want %v", got, want)
	}
}

// A failed sync is retried; a successful one forgets the key's failures;
// a shut-down queue stops the worker.
func TestProcessNextRetries(t *testing.T) {
	fail := true
	var calls []string
	l := New("test", "testing", quiet(), func(_ context.Context, ns string) error {
		calls = append(calls, ns)
		if fail {
			fail = false
			return errors.New("boom")
		}
		return nil
	})
	ctx := context.Background()
	l.queue.Add("a")
	if !l.processNext(ctx) {
		t.Fatal("worker stopped on a failed sync")
	}
	if n := l.queue.NumRequeues("a"); n != 1 {
		t.Errorf("requeues after a failure %d, want 1", n)
	}
	if !l.processNext(ctx) { // waits for the rate-limited retry
		t.Fatal("worker stopped")
	}
	if n := l.queue.NumRequeues("a"); n != 0 {
		t.Errorf("requeues after a success %d, want 0", n)
	}
	if !slices.Equal(calls, []string{"a", "a"}) {
		t.Errorf("sync calls %v", calls)
	}
	l.queue.ShutDown()
	if l.processNext(ctx) {
		t.Error("worker goes on after shutdown")
	}
}
