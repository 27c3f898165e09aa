package controlplane

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/event"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// Events not written for the TTL go; events written since (by any of
// their timestamps) stay.
func TestEventCollector(t *testing.T) {
	store, err := event.NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := context.Background()
	now := time.Now()
	create := func(name string, last time.Time, series bool) {
		t.Helper()
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
			Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: "test"},
			FirstTimestamp: metav1.NewTime(last), LastTimestamp: metav1.NewTime(last),
		}
		if series {
			ev.LastTimestamp = metav1.NewTime(now.Add(-3 * time.Hour))
			ev.FirstTimestamp = ev.LastTimestamp
			ev.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(last)}
			ev.EventTime = metav1.NewMicroTime(now.Add(-3 * time.Hour))
			ev.ReportingController, ev.ReportingInstance, ev.Action = "test", "test-1", "Test"
		}
		if _, err := store.Create(registrytest.Context("", "v1", "events", "default"), ev, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	// Both are created now; the series of the second was last observed
	// 30 minutes later (as its reporter updates it).
	create("old", now.Add(-10*time.Minute), false)
	create("recent-series", now.Add(30*time.Minute), true)

	// The collector's clock is two hours ahead and the TTL is 1h59m:
	// "old" was last written 2h before, "recent-series" 1h30m.
	c := &eventCollector{events: store, ttl: 119 * time.Minute, now: func() time.Time { return now.Add(2 * time.Hour) }, logger: slog.New(slog.DiscardHandler)}
	n, err := c.collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("collected %d events, want 1", n)
	}
	obj, err := store.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, ev := range obj.(*corev1.EventList).Items {
		left = append(left, ev.Name)
	}
	if !slices.Equal(left, []string{"recent-series"}) {
		t.Errorf("got events %v left, want [recent-series] (its series was observed within the TTL)", left)
	}
}
