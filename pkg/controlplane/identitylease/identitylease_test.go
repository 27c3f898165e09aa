package identitylease_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/controlplane/identitylease"
)

// TestID: the identity of a host is upstream's (k8s.io/apiserver
// pkg/server/config.go, v0.37.2). The golden value is the name of the
// identity Lease kube-apiserver v1.37.2 held on the host "vm".
func TestID(t *testing.T) {
	for host, want := range map[string]string{
		"vm": "apiserver-wlv32tlttr4jl3gtroqexyxapa",
	} {
		got, err := identitylease.ID(host)
		if err != nil || got != want {
			t.Errorf("ID(%q): got %q %v, want %q", host, got, err, want)
		}
	}
	a, _ := identitylease.ID("host-a")
	b, _ := identitylease.ID("host-b")
	if a == b {
		t.Errorf("two hosts share the identity %q", a)
	}
}

// TestHeartbeat: the labels and annotation of the reference's Lease
// (labelAPIServerHeartbeatFunc, pkg/controlplane/apiserver/server.go,
// v1.37.2), kept beside those already there.
func TestHeartbeat(t *testing.T) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"other": "x"}}}
	if err := identitylease.Heartbeat("kube-apiserver", "vm", identitylease.PeerAddress(net.IPv4(127, 0, 0, 1), 6443))(l); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"other": "x", "apiserver.kubernetes.io/identity": "kube-apiserver", "kubernetes.io/hostname": "vm"}
	wantAnn := map[string]string{"kubernetes.io/peer-advertise-address": "127.0.0.1:6443"}
	if fmt.Sprint(l.Labels) != fmt.Sprint(wantLabels) || fmt.Sprint(l.Annotations) != fmt.Sprint(wantAnn) {
		t.Errorf("got labels %v annotations %v, want %v %v", l.Labels, l.Annotations, wantLabels, wantAnn)
	}
	l = &coordinationv1.Lease{}
	_ = identitylease.Heartbeat("kube-apiserver", "vm", "")(l)
	if len(l.Annotations) != 0 {
		t.Errorf("no peer address: got annotations %v", l.Annotations)
	}
	if got := identitylease.PeerAddress(net.ParseIP("fd00::1"), 443); got != "[fd00::1]:443" {
		t.Errorf("IPv6 peer address: got %q", got)
	}
}

const ns = "kube-system"

func leaseNamed(t *testing.T, cs kubernetes.Interface, name string) (*coordinationv1.Lease, error) {
	t.Helper()
	return cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testwait.For(t, 10*time.Second, 5*time.Millisecond, what, cond)
}

// TestControllerLifecycle: against a real server, the controller deletes
// a Lease of its name left by an earlier holder, creates its own (holder,
// duration, renewTime, the heartbeat's labels), renews it, renews a Lease
// another writer changed (keeping that holder, as upstream does), makes it
// again when it is deleted, and deletes it for good on Stop.
func TestControllerLifecycle(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	const name = "apiserver-test"
	leases := cs.CoordinationV1().Leases(ns)
	stale, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: new("apiserver-test_old-run")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	clock := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	ctrl := identitylease.New(identitylease.Config{
		Leases:          cs.CoordinationV1(),
		Name:            name,
		Namespace:       ns,
		Holder:          "apiserver-test_new-run",
		DurationSeconds: 3600,
		RenewInterval:   20 * time.Millisecond,
		Process:         identitylease.Heartbeat("kube-apiserver", "vm", "127.0.0.1:6443"),
		Now:             now,
	})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl.Run(runCtx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	var first *coordinationv1.Lease
	eventually(t, "the lease is made anew", func() error {
		l, err := leaseNamed(t, cs, name)
		if err != nil {
			return err
		}
		if l.UID == stale.UID {
			return fmt.Errorf("still the stale lease")
		}
		first = l
		return nil
	})
	s := first.Spec
	if *s.HolderIdentity != "apiserver-test_new-run" || *s.LeaseDurationSeconds != 3600 || s.RenewTime == nil ||
		first.Labels["apiserver.kubernetes.io/identity"] != "kube-apiserver" || first.Labels["kubernetes.io/hostname"] != "vm" ||
		first.Annotations["kubernetes.io/peer-advertise-address"] != "127.0.0.1:6443" || s.AcquireTime != nil {
		t.Fatalf("lease: got %+v", first)
	}
	eventually(t, "the lease is renewed", func() error {
		l, err := leaseNamed(t, cs, name)
		if err != nil {
			return err
		}
		if !l.Spec.RenewTime.After(first.Spec.RenewTime.Time) {
			return fmt.Errorf("renewTime still %v", l.Spec.RenewTime)
		}
		return nil
	})

	// Another writer takes the Lease: the renewal conflicts, reads it, and
	// renews what it read.
	eventually(t, "another writer's update", func() error {
		l, err := leaseNamed(t, cs, name)
		if err != nil {
			return err
		}
		l.Spec.HolderIdentity = new("someone-else")
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
	var taken *coordinationv1.Lease
	eventually(t, "the other holder's lease is renewed", func() error {
		l, err := leaseNamed(t, cs, name)
		if err != nil {
			return err
		}
		if *l.Spec.HolderIdentity != "someone-else" {
			return fmt.Errorf("holder %q", *l.Spec.HolderIdentity)
		}
		if taken == nil {
			taken = l
			return fmt.Errorf("not renewed yet")
		}
		if l.ResourceVersion == taken.ResourceVersion {
			return fmt.Errorf("not renewed yet")
		}
		return nil
	})

	// Deleted: made again.
	if err := leases.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted lease is made again", func() error {
		l, err := leaseNamed(t, cs, name)
		if err != nil {
			return err
		}
		if *l.Spec.HolderIdentity != "apiserver-test_new-run" {
			return fmt.Errorf("holder %q", *l.Spec.HolderIdentity)
		}
		return nil
	})

	ctrl.Stop()
	if _, err := leaseNamed(t, cs, name); !apierrors.IsNotFound(err) {
		t.Fatalf("after Stop: got %v, want NotFound", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Stop")
	}
	time.Sleep(100 * time.Millisecond) // five renewal periods
	if _, err := leaseNamed(t, cs, name); !apierrors.IsNotFound(err) {
		t.Fatalf("after Stop: the lease came back (%v)", err)
	}
	ctrl.Stop() // idempotent
}

// TestStopBeforeRun: a controller stopped before it ran deletes the Lease
// of its name (as upstream's Stop does) and never makes one.
func TestStopBeforeRun(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "apiserver-x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrl := identitylease.New(identitylease.Config{Leases: cs.CoordinationV1(), Name: "apiserver-x", Namespace: ns,
		Holder: "h", DurationSeconds: 3600, RenewInterval: 10 * time.Millisecond})
	ctrl.Stop()
	ctrl.Run(ctx) // returns at once
	if _, err := leaseNamed(t, cs, "apiserver-x"); !apierrors.IsNotFound(err) {
		t.Fatalf("got %v, want NotFound", err)
	}
}

// TestGC: the collector deletes the identity Leases (by the selector)
// whose renewal plus duration is past, or that lack either, and keeps
// live ones and Leases the selector does not choose.
func TestGC(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	now := time.Now()
	mk := func(name string, identity bool, renewed *time.Time, duration *int32) {
		t.Helper()
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: duration}}
		if identity {
			l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
		}
		if renewed != nil {
			l.Spec.RenewTime = &metav1.MicroTime{Time: *renewed}
		}
		if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hourAgo, minuteAgo := now.Add(-time.Hour-time.Minute), now.Add(-time.Minute)
	mk("expired", true, &hourAgo, new(int32(3600)))
	mk("live", true, &minuteAgo, new(int32(3600)))
	mk("no-renew-time", true, nil, new(int32(3600)))
	mk("no-duration", true, &minuteAgo, nil)
	mk("not-identity", false, &hourAgo, new(int32(3600)))
	gc := &identitylease.GC{Leases: cs.CoordinationV1(), Namespace: ns,
		Selector: "apiserver.kubernetes.io/identity=kube-apiserver", Period: time.Hour}
	gc.Collect(ctx)
	for name, kept := range map[string]bool{"expired": false, "live": true, "no-renew-time": false, "no-duration": false, "not-identity": true} {
		_, err := leaseNamed(t, cs, name)
		switch {
		case kept && err != nil:
			t.Errorf("%s: got %v, want kept", name, err)
		case !kept && !apierrors.IsNotFound(err):
			t.Errorf("%s: got %v, want deleted", name, err)
		}
	}
}
