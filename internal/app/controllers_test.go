package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

const leaseName = "kapi-controller-manager"

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testwait.For(t, timeout, 20*time.Millisecond, what, cond)
}

// metric sums the samples of family whose labels include labels.
func metric(t *testing.T, cfg *rest.Config, family string, labels map[string]string) float64 {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	f := families[family]
	if f == nil {
		return 0
	}
	sum := 0.0
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		sum += value(m)
	}
	return sum
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return 0
}

func leading(t *testing.T, s *kapitest.Server) float64 {
	return metric(t, s.Config, "leader_election_master_status", map[string]string{"name": leaseName})
}

func configMapDeletes(t *testing.T, s *kapitest.Server) float64 {
	return metric(t, s.Config, "apiserver_request_total", map[string]string{"verb": "DELETE", "resource": "configmaps"})
}

func holder(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	l, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// collect creates a Secret owning n ConfigMaps through cs, deletes it and
// waits for the ConfigMaps to be collected.
func collect(t *testing.T, cs kubernetes.Interface, ns, name string, n int) {
	t.Helper()
	ctx := context.Background()
	owner, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{"set": name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: name, UID: owner.UID}},
		}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "dependents of "+name+" collected", func() error {
		l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "set=" + name})
		if err != nil {
			return err
		}
		if len(l.Items) > 0 {
			return fmt.Errorf("%d left", len(l.Items))
		}
		return nil
	})
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// configMapDeletesDone counts the ConfigMap deletes s served that deleted
// (200); configMapDeletes counts them all, whatever they answered.
func configMapDeletesDone(t *testing.T, s *kapitest.Server) float64 {
	return metric(t, s.Config, "apiserver_request_total", map[string]string{"verb": "DELETE", "resource": "configmaps", "code": "200"})
}

func serviceAccountCreates(t *testing.T, s *kapitest.Server) float64 {
	return metric(t, s.Config, "apiserver_request_total", map[string]string{"verb": "POST", "resource": "serviceaccounts"})
}

// term identifies one leadership: who holds the Lease and since when. A
// renewal keeps it; a lost (or released) and retaken Lease changes it.
type term struct {
	holder      string
	acquired    int64 // Unix nanoseconds
	transitions int32
}

func leaseTerm(t *testing.T, cs kubernetes.Interface) term {
	t.Helper()
	l, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	var tm term
	if l.Spec.HolderIdentity != nil {
		tm.holder = *l.Spec.HolderIdentity
	}
	if l.Spec.AcquireTime != nil {
		tm.acquired = l.Spec.AcquireTime.UnixNano()
	}
	if l.Spec.LeaseTransitions != nil {
		tm.transitions = *l.Spec.LeaseTransitions
	}
	return tm
}

// roles are the two servers of TestControllersRunOnTheLeaderOnly: the
// one whose identity holds the Lease, and the other (nil once stopped).
type roles struct {
	leader, follower *kapitest.Server
	leaderID         string
}

// leaderDoesTheWork asks everything of the follower (of the leader once
// alone) and checks that the leader, not the follower, did the work: the
// default ServiceAccount of a new namespace and the collection of an
// owner's 20 dependents.
//
// The work is only attributable while one leadership lasts. Under load
// (a Lease renewal that etcd does not commit within the renew deadline)
// the leader rightly gives the Lease up, as client-go's elector does, and
// the work may then be shared: such a round is done again (with the roles
// swapped if the Lease went to the other server), up to three times. A
// follower that works while the leadership stays put fails the round; so
// does a leadership that never stays put.
func leaderDoesTheWork(t *testing.T, r *roles, round string) {
	t.Helper()
	const attempts, n = 3, 20
	for i := range attempts {
		asked := r.leader
		if r.follower != nil {
			asked = r.follower
		}
		cs := kubernetes.NewForConfigOrDie(asked.Config)
		ns := fmt.Sprintf("%s-%d", round, i)
		before := leaseTerm(t, cs)
		if before.holder != r.leaderID {
			// The other server's, if it says it leads.
			if r.follower == nil || before.holder == "" || leading(t, r.follower) != 1 {
				t.Logf("%s: the Lease is held by %q, not %q, before the round; again", ns, before.holder, r.leaderID)
				time.Sleep(time.Second)
				continue
			}
			t.Logf("%s: the Lease went to the other server (%q) before the round: roles swapped", ns, before.holder)
			r.leader, r.follower, r.leaderID = r.follower, r.leader, before.holder
			cs = kubernetes.NewForConfigOrDie(r.follower.Config)
		}
		leaderDone := configMapDeletesDone(t, r.leader)
		var followerDeletes, followerCreates float64
		if r.follower != nil {
			followerDeletes, followerCreates = configMapDeletes(t, r.follower), serviceAccountCreates(t, r.follower)
		}

		createNamespace(t, cs, ns)
		waitFor(t, 30*time.Second, "default service account in "+ns, func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
			return err
		})
		collect(t, cs, ns, "owner", n)
		// A request is counted once its handler returned, after the
		// object it deleted is gone: the collection can be seen done
		// before its last deletes are counted.
		collected := time.Now()
		got := configMapDeletesDone(t, r.leader) - leaderDone
		if got < n {
			counted := got
			for got < n && time.Since(collected) < 10*time.Second {
				time.Sleep(20 * time.Millisecond)
				got = configMapDeletesDone(t, r.leader) - leaderDone
			}
			t.Logf("%s: %v of the leader's deletes counted once the collection was seen done, %v %v later", ns, counted, got, time.Since(collected).Round(time.Millisecond))
		}
		if after := leaseTerm(t, cs); after != before {
			t.Logf("%s: the leadership changed during the round (%+v, then %+v); again", ns, before, after)
			continue
		}
		if got != n {
			t.Errorf("%s: the leader deleted %v ConfigMaps, want the %d of the collection", ns, got, n)
		}
		if r.follower != nil {
			if d := configMapDeletes(t, r.follower) - followerDeletes; d != 0 {
				t.Errorf("%s: the follower served %v ConfigMap deletes, want none", ns, d)
			}
			if d := serviceAccountCreates(t, r.follower) - followerCreates; d != 0 {
				t.Errorf("%s: the follower served %v ServiceAccount creates, want none", ns, d)
			}
		}
		return
	}
	t.Errorf("%s: the leadership changed in each of %d rounds", round, attempts)
}

// Two kapis on one etcd: the controllers run on the Lease holder only, and
// the other takes over when it stops.
func TestControllersRunOnTheLeaderOnly(t *testing.T) {
	te := startTestEtcd(t, nil)
	shared := kapitest.WithFlags("--storage-backend=etcd3", "--etcd-servers="+te.url(),
		"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms")
	// a is ready once it leads (it is alone); b once it saw a lead, or
	// leads (a gave the Lease up under load, see leaderDoesTheWork).
	a := kapitest.Start(t, shared)
	if got := leading(t, a); got != 1 {
		t.Fatalf("first server, alone: leader_election_master_status %v, want 1", got)
	}
	b := kapitest.Start(t, shared)
	r := &roles{}
	waitFor(t, 15*time.Second, "one of the two leads", func() error {
		la, lb := leading(t, a), leading(t, b)
		switch {
		case la == 1 && lb == 0:
			r.leader, r.follower = a, b
		case la == 0 && lb == 1:
			r.leader, r.follower = b, a
		default:
			return fmt.Errorf("leader_election_master_status %v and %v", la, lb)
		}
		return nil
	})
	cs := kubernetes.NewForConfigOrDie(b.Config)
	if r.leaderID = holder(t, cs); r.leaderID == "" {
		t.Fatal("the Lease has no holder")
	}

	// Everything is asked of the follower; the leader does the work.
	leaderDoesTheWork(t, r, "first")

	// The leader stops (and releases the Lease): the follower takes over,
	// within a retry period (a lease duration had the release failed).
	if err := r.leader.Stop(); err != nil {
		t.Fatal(err)
	}
	next := &roles{leader: r.follower}
	cs = kubernetes.NewForConfigOrDie(next.leader.Config)
	waitFor(t, 15*time.Second, "the Lease taken over", func() error {
		if next.leaderID = holder(t, cs); next.leaderID == r.leaderID || next.leaderID == "" {
			return fmt.Errorf("holder %q, the stopped server's %q", next.leaderID, r.leaderID)
		}
		return nil
	})
	// And says so. Under load the new leader too may give the Lease up
	// and take it again, with the gauge 0 in between, and a scrape (the
	// whole /metrics, parsed) then takes seconds: the wait is longer.
	scrapes := 0
	waitFor(t, 30*time.Second, "the other server leads", func() error {
		scrapes++
		start := time.Now()
		if got := leading(t, next.leader); got != 1 {
			return fmt.Errorf("leader_election_master_status %v (scrape %d took %v)", got, scrapes, time.Since(start).Round(time.Millisecond))
		}
		return nil
	})
	leaderDoesTheWork(t, next, "second")
}

// With storage no other server can share, a Lease a previous run left
// (a crash: not released) is removed at start instead of waited out.
func TestControllersTakeOverAPreviousRunsLease(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The first run elects itself with another Lease, so the default one
	// can be planted as a crashed server's.
	first, err := kapitest.StartE(dir, logger, kapitest.WithEmbeddedEtcd(), kapitest.WithFlags("--leader-elect-resource-name=elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(first.Config)
	crashed, hour := "crashed-host_0000", int32(3600)
	now := metav1.NewMicroTime(time.Now())
	_, err = cs.CoordinationV1().Leases("kube-system").Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &crashed, LeaseDurationSeconds: &hour, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	second, err := kapitest.StartE(dir, logger, kapitest.WithEmbeddedEtcd())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := second.Stop(); err != nil {
			t.Error(err)
		}
	})
	// Ready means leading or following; following a crashed holder would
	// show 0 here.
	if got := leading(t, second); got != 1 {
		t.Errorf("leader_election_master_status %v, want 1 (the stale Lease removed)", got)
	}
	if h := holder(t, kubernetes.NewForConfigOrDie(second.Config)); h == crashed {
		t.Errorf("Lease holder: still %q", h)
	}
}

func TestControllersSwitchedOff(t *testing.T) {
	// An alias, negated; and no leader election.
	s := kapitest.Start(t, kapitest.WithFlags("--controllers=*,-serviceaccount", "--leader-elect=false"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	createNamespace(t, cs, "switched")
	ctx := context.Background()
	waitFor(t, 30*time.Second, "kube-root-ca.crt", func() error {
		_, err := cs.CoreV1().ConfigMaps("switched").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
	collect(t, cs, "switched", "owner", 3)
	if _, err := cs.CoreV1().ServiceAccounts("switched").Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("default service account with the controller off: got %v, want NotFound", err)
	}
	if _, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, leaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Lease without leader election: got %v, want NotFound", err)
	}
}

// --controllers=*,-garbage-collector-controller (kube-controller-manager's
// name; the alias "garbagecollector" is accepted too): nothing collects,
// so a dependent outlives its owner and a foreground-deleted owner keeps
// its finalizer, while the other controllers run.
func TestGarbageCollectorSwitchedOff(t *testing.T) {
	s := kapitest.Start(t, kapitest.WithFlags("--controllers=*,-garbage-collector-controller"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	createNamespace(t, cs, "nogc")
	waitFor(t, 30*time.Second, "default service account (its controller is on)", func() error {
		_, err := cs.CoreV1().ServiceAccounts("nogc").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	owners := map[metav1.DeletionPropagation]string{metav1.DeletePropagationBackground: "bg", metav1.DeletePropagationForeground: "fg"}
	for p, name := range owners {
		owner, err := cs.CoreV1().Secrets("nogc").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		yes := true
		if _, err := cs.CoreV1().ConfigMaps("nogc").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name:            name + "-dependent",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: name, UID: owner.UID, BlockOwnerDeletion: &yes}},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Secrets("nogc").Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
			t.Fatal(err)
		}
	}
	// A running collector deletes hundreds of dependents a second
	// (docs/performance.md, "Garbage collection"): three seconds would
	// leave it ample time for these two.
	time.Sleep(3 * time.Second)
	for _, name := range owners {
		if _, err := cs.CoreV1().ConfigMaps("nogc").Get(ctx, name+"-dependent", metav1.GetOptions{}); err != nil {
			t.Errorf("dependent of %s without a collector: %v, want it kept", name, err)
		}
	}
	if _, err := cs.CoreV1().Secrets("nogc").Get(ctx, "bg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("background-deleted owner: %v, want NotFound (deleted at once)", err)
	}
	fg, err := cs.CoreV1().Secrets("nogc").Get(ctx, "fg", metav1.GetOptions{})
	if err != nil || fg.DeletionTimestamp == nil || !slices.Contains(fg.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("foreground-deleted owner without a collector: %v %+v, want it waiting with foregroundDeletion", err, fg)
	}
}

func TestControllersFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// kube-controller-manager's message.
		// The example is no kube-controller-manager name either.
		{[]string{"--controllers=*,-garbage-collector"}, `"garbage-collector" is not in the list of known controllers`},
		{[]string{"--controllers=bogus"}, `"bogus" is not in the list of known controllers`},
		{[]string{"--leader-elect-lease-duration=5s"}, "--leader-elect-lease-duration (5s) must be greater than --leader-elect-renew-deadline (10s)"},
	}
	for _, tc := range tests {
		cmd := app.NewCommand()
		cmd.SetArgs(append([]string{"--data-dir=" + t.TempDir()}, tc.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	// Accepted: canonical names, aliases, negations.
	o := app.NewOptions()
	o.DataDir = t.TempDir()
	// kube-controller-manager's other controllers (by name or alias) are
	// accepted as it accepts them, and not run.
	o.Controllers.Controllers = []string{"*", "-garbagecollector", "root-ca-certificate-publisher-controller", "-serviceaccount-controller", "-deployment-controller", "-podgc", "service-lb-controller"}
	if _, err := o.Complete(); err != nil {
		t.Errorf("valid --controllers: %v", err)
	}
}
