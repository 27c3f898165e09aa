package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Events are one object served in two groups: a manager recorded through
// events.k8s.io/v1 survives a write through core/v1 (managed fields are
// converted between the versions, as upstream does through its internal
// version).
func TestEventManagedFieldsAcrossGroups(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		apply := []byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"ev1","namespace":"` + ns + `"},` +
			`"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"example.com/ctl","reportingInstance":"i1","action":"Act","reason":"Why",` +
			`"regarding":{"kind":"Pod","name":"p","namespace":"` + ns + `"},"note":"first","type":"Normal"}`)
		res := e.cs.EventsV1().RESTClient().Patch(types.ApplyPatchType).
			AbsPath("/apis/events.k8s.io/v1/namespaces", ns, "events", "ev1").
			Param("fieldManager", "events-applier").Body(apply).Do(ctx)
		if err := res.Error(); err != nil {
			t.Fatalf("apply through events.k8s.io/v1: %v", err)
		}
		ev, err := e.cs.CoreV1().Events(ns).Get(ctx, "ev1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev.Count = 5
		if _, err := e.cs.CoreV1().Events(ns).Update(ctx, ev, metav1.UpdateOptions{FieldManager: "core-updater"}); err != nil {
			t.Fatalf("update through core/v1: %v", err)
		}
		got, err := e.cs.EventsV1().Events(ns).Get(ctx, "ev1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		managers := map[string]bool{}
		for _, m := range got.ManagedFields {
			managers[m.Manager] = true
		}
		if !managers["events-applier"] || !managers["core-updater"] {
			t.Fatalf("managers after writes through both groups: %v, want events-applier and core-updater", managers)
		}
	})
}
