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
	"github.com/kapi-dev/kapi/kapitest"
)

const leaseName = "kapi-controller-manager"

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
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

// Two kapis on one etcd: the controllers run on the Lease holder only, and
// the other takes over when it stops.
func TestControllersRunOnTheLeaderOnly(t *testing.T) {
	te := startTestEtcd(t, nil)
	shared := kapitest.WithFlags("--storage-backend=etcd3", "--etcd-servers="+te.url(),
		"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms")
	// a is ready once it leads (it is alone); b once it saw a lead.
	a := kapitest.Start(t, shared)
	b := kapitest.Start(t, shared)
	csB := kubernetes.NewForConfigOrDie(b.Config)
	if got := leading(t, a); got != 1 {
		t.Fatalf("first server: leader_election_master_status %v, want 1", got)
	}
	if got := leading(t, b); got != 0 {
		t.Fatalf("second server: leader_election_master_status %v, want 0", got)
	}
	first := holder(t, csB)
	if first == "" {
		t.Fatal("the Lease has no holder")
	}

	// Everything is asked of the follower; the leader does the work.
	createNamespace(t, csB, "leader-a")
	waitFor(t, 30*time.Second, "default service account", func() error {
		_, err := csB.CoreV1().ServiceAccounts("leader-a").Get(context.Background(), "default", metav1.GetOptions{})
		return err
	})
	collect(t, csB, "leader-a", "owner-a", 20)
	if got := configMapDeletes(t, a); got < 20 {
		t.Errorf("leader: %v ConfigMap deletes served, want the 20 of the collection", got)
	}
	if got := configMapDeletes(t, b); got != 0 {
		t.Errorf("follower: %v ConfigMap deletes served, want none", got)
	}
	if got := metric(t, b.Config, "apiserver_request_total", map[string]string{"verb": "POST", "resource": "serviceaccounts"}); got != 0 {
		t.Errorf("follower: %v ServiceAccount creates served, want none", got)
	}

	// The leader stops (and releases the Lease): the follower takes over.
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "second server leads", func() error {
		if got := leading(t, b); got != 1 {
			return fmt.Errorf("leader_election_master_status %v", got)
		}
		return nil
	})
	if h := holder(t, csB); h == first || h == "" {
		t.Errorf("Lease holder after the takeover: got %q, want another than %q", h, first)
	}
	createNamespace(t, csB, "leader-b")
	waitFor(t, 30*time.Second, "default service account after the takeover", func() error {
		_, err := csB.CoreV1().ServiceAccounts("leader-b").Get(context.Background(), "default", metav1.GetOptions{})
		return err
	})
	collect(t, csB, "leader-b", "owner-b", 20)
	if got := configMapDeletes(t, b); got < 20 {
		t.Errorf("new leader: %v ConfigMap deletes served, want the 20 of the collection", got)
	}
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
