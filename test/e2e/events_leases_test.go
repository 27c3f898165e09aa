package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
)

// TestEventsInBothGroups: core/v1 and events.k8s.io/v1 events are the same
// objects, with the fields mapped as kube maps them.
func TestEventsInBothGroups(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		core := e.cs.CoreV1().Events(ns)
		events := e.cs.EventsV1().Events(ns)

		w, err := events.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()

		first := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		last := metav1.NewTime(time.Now().Truncate(time.Second))
		created, err := core.Create(ctx, &corev1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: "core-made"},
			InvolvedObject:      corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm", APIVersion: "v1"},
			Reason:              "Tested",
			Message:             "made through core/v1",
			Type:                corev1.EventTypeWarning,
			Source:              corev1.EventSource{Component: "e2e"},
			FirstTimestamp:      first,
			LastTimestamp:       last,
			Count:               3,
			ReportingController: "e2e-controller",
			ReportingInstance:   "e2e-1",
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create core/v1 event: %v", err)
		}
		seen := expectEvent(t, w, watch.Added, "core-made").(*eventsv1.Event)
		got, err := events.Get(ctx, "core-made", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get through events.k8s.io/v1: %v", err)
		}
		for _, ev := range []*eventsv1.Event{seen, got} {
			if ev.UID != created.UID || ev.ResourceVersion != created.ResourceVersion {
				t.Errorf("events.k8s.io/v1 view has uid %s rv %s, want %s %s", ev.UID, ev.ResourceVersion, created.UID, created.ResourceVersion)
			}
			if ev.Note != created.Message || ev.Reason != "Tested" || ev.Type != corev1.EventTypeWarning ||
				ev.Regarding.Name != "cm" || ev.Regarding.Kind != "ConfigMap" || ev.DeprecatedCount != 3 ||
				ev.DeprecatedSource.Component != "e2e" || !ev.DeprecatedFirstTimestamp.Equal(&first) || !ev.DeprecatedLastTimestamp.Equal(&last) ||
				ev.ReportingController != "e2e-controller" || ev.ReportingInstance != "e2e-1" {
				t.Errorf("events.k8s.io/v1 view %+v does not map the core/v1 event %+v", ev, created)
			}
		}

		eventTime := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
		made, err := events.Create(ctx, &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: "events-made"},
			EventTime:           eventTime,
			ReportingController: "example.com/e2e",
			ReportingInstance:   "e2e-2",
			Action:              "Testing",
			Reason:              "Tested",
			Regarding:           corev1.ObjectReference{Kind: "Secret", Namespace: ns, Name: "s"},
			Note:                "made through events.k8s.io/v1",
			Type:                corev1.EventTypeNormal,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create events.k8s.io/v1 event: %v", err)
		}
		expectEvent(t, w, watch.Added, "events-made")
		back, err := core.Get(ctx, "events-made", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get through core/v1: %v", err)
		}
		if back.UID != made.UID || back.Message != made.Note || back.InvolvedObject.Name != "s" || back.Action != "Testing" ||
			back.ReportingController != "example.com/e2e" || !back.EventTime.Equal(&eventTime) {
			t.Errorf("core/v1 view %+v does not map the events.k8s.io/v1 event %+v", back, made)
		}

		// An update through one group is a change seen through the other.
		back.Message = "changed"
		if _, err := core.Update(ctx, back, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update through core/v1: %v", err)
		}
		if ev := expectEvent(t, w, watch.Modified, "events-made").(*eventsv1.Event); ev.Note != "changed" {
			t.Errorf("events.k8s.io/v1 watch saw note %q, want changed", ev.Note)
		}

		list, err := events.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		coreList, err := core.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 2 || len(coreList.Items) != 2 {
			t.Errorf("got %d events.k8s.io/v1 and %d core/v1 events, want 2 and 2", len(list.Items), len(coreList.Items))
		}
		// events.k8s.io/v1 requires what core/v1 does not.
		_, err = events.Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "incomplete"}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("create an events.k8s.io/v1 event without eventTime: got %v, want Invalid", err)
		}
		if err := events.Delete(ctx, "core-made", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete through events.k8s.io/v1: %v", err)
		}
		if _, err := core.Get(ctx, "core-made", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get through core/v1 after delete: got %v, want NotFound", err)
		}
	})
}

func TestLeases(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		leases := e.cs.CoordinationV1().Leases(ns)
		now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
		l, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "l"},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To("a"),
				LeaseDurationSeconds: ptr.To[int32](10),
				AcquireTime:          &now,
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create lease: %v", err)
		}
		renew := metav1.NewMicroTime(now.Add(time.Second))
		l.Spec.RenewTime = &renew
		l.Spec.LeaseTransitions = ptr.To[int32](1)
		l.Spec.HolderIdentity = ptr.To("b")
		updated, err := leases.Update(ctx, l, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update lease: %v", err)
		}
		if *updated.Spec.HolderIdentity != "b" || !updated.Spec.RenewTime.Equal(&renew) || *updated.Spec.LeaseTransitions != 1 {
			t.Errorf("updated lease spec %+v", updated.Spec)
		}
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("stale lease update: got %v, want Conflict", err)
		}
		l.Spec.LeaseDurationSeconds = ptr.To[int32](0)
		l.ResourceVersion = updated.ResourceVersion
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("lease with leaseDurationSeconds 0: got %v, want Invalid", err)
		}
	})
}

// TestLeaderElection runs client-go leader election with a Lease lock: one
// of two candidates leads; when it steps down (releasing the lease) the
// other takes over.
func TestLeaderElection(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		type candidate struct {
			id      string
			cancel  context.CancelFunc
			leading chan struct{}
			done    chan struct{}
		}
		start := func(id string) *candidate {
			ctx, cancel := context.WithCancel(context.Background())
			c := &candidate{id: id, cancel: cancel, leading: make(chan struct{}), done: make(chan struct{})}
			lock := &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: "leader"},
				Client:     e.cs.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: id},
			}
			le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
				Lock:            lock,
				LeaseDuration:   3 * time.Second,
				RenewDeadline:   2 * time.Second,
				RetryPeriod:     100 * time.Millisecond,
				ReleaseOnCancel: true,
				Name:            "e2e",
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(ctx context.Context) { close(c.leading) },
					OnStoppedLeading: func() {},
				},
			})
			if err != nil {
				t.Fatalf("leader elector: %v", err)
			}
			go func() {
				defer close(c.done)
				le.Run(ctx)
			}()
			return c
		}
		a := start("a")
		var once sync.Once
		stop := func(c *candidate) {
			c.cancel()
			<-c.done
		}
		defer once.Do(func() { stop(a) })
		select {
		case <-a.leading:
		case <-time.After(15 * time.Second):
			t.Fatal("a did not become leader within 15s")
		}
		b := start("b")
		defer stop(b)

		lease, err := e.cs.CoordinationV1().Leases(ns).Get(context.Background(), "leader", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "a" || lease.Spec.LeaseDurationSeconds == nil || *lease.Spec.LeaseDurationSeconds != 3 {
			t.Errorf("lease spec %+v, want held by a for 3s", lease.Spec)
		}
		select {
		case <-b.leading:
			t.Fatal("b leads while a holds the lease")
		case <-time.After(300 * time.Millisecond):
		}

		once.Do(func() { stop(a) }) // releases the lease
		select {
		case <-b.leading:
		case <-time.After(15 * time.Second):
			t.Fatal("b did not take over within 15s of a stepping down")
		}
		lease, err = e.cs.CoordinationV1().Leases(ns).Get(context.Background(), "leader", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "b" || lease.Spec.LeaseTransitions == nil || *lease.Spec.LeaseTransitions < 1 {
			t.Errorf("lease spec %+v, want held by b after at least one transition", lease.Spec)
		}
	})
}
