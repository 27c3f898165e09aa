package main

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A new namespace's kube-root-ca.crt ConfigMap arrives on the watch
// beside the benchmark's creates; it must not be counted as one of them
// (it was, as event 0 with a zero send time: a latency of 292 years).
func TestCollectLatenciesSkipsForeignObjects(t *testing.T) {
	ch := make(chan watch.Event, 4)
	cm := func(name, i string) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if i != "" {
			c.Data = map[string]string{"i": i}
		}
		return c
	}
	ch <- watch.Event{Type: watch.Added, Object: cm("kube-root-ca.crt", "")}
	ch <- watch.Event{Type: watch.Added, Object: cm("w-0", "0")}
	ch <- watch.Event{Type: watch.Modified, Object: cm("w-0", "0")}
	ch <- watch.Event{Type: watch.Added, Object: cm("w-1", "1")}
	close(ch)
	sent := time.Now()
	var counted []int
	lats := collectLatencies(ch, 2, func(i int) time.Time {
		counted = append(counted, i)
		return sent
	})
	if len(lats) != 2 || !slices.Equal(counted, []int{0, 1}) {
		t.Fatalf("counted events %v (%d latencies), want w-0 and w-1 only", counted, len(lats))
	}
	for _, l := range lats {
		if l < 0 || l > time.Minute {
			t.Errorf("latency %v: not measured from the send", l)
		}
	}
}
