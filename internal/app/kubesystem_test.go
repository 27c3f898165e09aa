package app_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/server"
)

// The reference's identity Lease on the host "vm" (kube-apiserver v1.37.2).
const (
	testHost          = "vm"
	testIdentityLease = "apiserver-wlv32tlttr4jl3gtroqexyxapa"
	trackingConfigMap = "kube-apiserver-legacy-service-account-token-tracking"
)

// TestKubeSystemObjects: the server keeps kube-apiserver's identity Lease
// (name from the host name, upstream's labels, annotation, holder and
// duration, written as kube-apiserver) and the legacy token tracking
// ConfigMap (today's UTC date, written as kube-apiserver), both made only
// once the server is ready; the hooks are listed where upstream lists them;
// the Lease is deleted while the server stops.
func TestKubeSystemObjects(t *testing.T) {
	// What storage holds when the server becomes ready (the first 200
	// from /readyz): the signal's callback runs before anything waiting
	// for the signal does.
	var mu sync.Mutex
	var cfg *app.Config
	var atReady []string
	r := startKapiWith(t, func(c *app.Config, _ *server.GenericServer) {
		mu.Lock()
		defer mu.Unlock()
		cfg = c
	}, func(o *app.Options) {
		o.Hostname = func() (string, error) { return testHost, nil }
		record := o.OnLifecycleSignal
		o.OnLifecycleSignal = func(name string) {
			record(name)
			if name != "HasBeenReady" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			keys, _, err := cfg.MemoryBackend().Keys("")
			if err != nil {
				t.Error(err)
			}
			atReady = keys
		}
	})

	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(r.rest)
	var lease *coordinationv1.Lease
	waitFor(t, 10*time.Second, "the identity lease", func() error {
		var err error
		lease, err = cs.CoordinationV1().Leases("kube-system").Get(ctx, testIdentityLease, metav1.GetOptions{})
		return err
	})
	_, port, err := net.SplitHostPort(strings.TrimPrefix(r.base, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.APIServerID != testIdentityLease {
		t.Errorf("APIServerID: got %q, want %q", r.cfg.APIServerID, testIdentityLease)
	}
	s := lease.Spec
	if got, want := lease.Labels, map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver", "kubernetes.io/hostname": testHost}; !maps.Equal(got, want) {
		t.Errorf("labels: got %v, want %v", got, want)
	}
	if got, want := lease.Annotations, map[string]string{"kubernetes.io/peer-advertise-address": "127.0.0.1:" + port}; !maps.Equal(got, want) {
		t.Errorf("annotations: got %v, want %v", got, want)
	}
	if s.HolderIdentity == nil || !strings.HasPrefix(*s.HolderIdentity, testIdentityLease+"_") || len(*s.HolderIdentity) != len(testIdentityLease)+1+36 ||
		s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds != 3600 || s.RenewTime == nil || s.AcquireTime != nil || s.LeaseTransitions != nil {
		t.Errorf("spec: got %+v", s)
	}
	if mf := lease.ManagedFields; len(mf) != 1 || mf[0].Manager != "kube-apiserver" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managed fields: got %+v, want one Update of kube-apiserver", mf)
	}
	var cm *corev1.ConfigMap
	waitFor(t, 10*time.Second, "the legacy token tracking configmap", func() error {
		c, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, trackingConfigMap, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if today := time.Now().UTC().Format("2006-01-02"); len(c.Data) != 1 || c.Data["since"] != today {
			return fmt.Errorf("data %v, want since=%s", c.Data, today)
		}
		cm = c
		return nil
	})
	if mf := cm.ManagedFields; len(mf) != 1 || mf[0].Manager != "kube-apiserver" {
		t.Errorf("configmap managed fields: got %+v", mf)
	}
	mu.Lock()
	for _, k := range atReady {
		if strings.Contains(k, testIdentityLease) || strings.Contains(k, trackingConfigMap) {
			t.Errorf("%s was stored before the server was ready", k)
		}
	}
	if len(atReady) == 0 {
		t.Error("storage not read when the server became ready")
	}
	mu.Unlock()

	// The hooks, where upstream lists them (after
	// start-cluster-authentication-info-controller, in this order:
	// pkg/controlplane/apiserver/server.go, v1.37.2), on all three.
	want := []string{
		"poststarthook/start-cluster-authentication-info-controller",
		"poststarthook/start-kube-apiserver-identity-lease-controller",
		"poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
		"poststarthook/start-legacy-token-tracking-controller",
	}
	for _, path := range []string{"/readyz", "/livez", "/healthz"} {
		body, err := cs.CoreV1().RESTClient().Get().AbsPath(path).Param("verbose", "").DoRaw(ctx)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var names []string
		for _, line := range strings.Split(string(body), "\n") {
			if name, ok := strings.CutPrefix(line, "[+]"); ok {
				names = append(names, strings.TrimSuffix(name, " ok"))
			}
		}
		i := slices.Index(names, want[0])
		if i < 0 || i+len(want) > len(names) || !slices.Equal(names[i:i+len(want)], want) {
			t.Errorf("%s?verbose: got %q, want %q in a row", path, names, want)
		}
	}

	// Stopping deletes the Lease while the server still serves (the
	// pre-shutdown hook stop-kube-apiserver-identity-lease-controller).
	w, err := cs.CoordinationV1().Leases("kube-system").Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + testIdentityLease, ResourceVersion: lease.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	r.shutdown()
	deadline := time.After(30 * time.Second)
	for deleted := false; !deleted; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended before the lease was deleted")
			}
			deleted = ev.Type == watch.Deleted
		case <-deadline:
			t.Fatal("the lease was not deleted at shutdown")
		}
	}
	w.Stop() // a watch still open would hold the shutdown
	if err := r.runErr(); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestIdentityLeaseRenewalAndGC: the test seams in place of upstream's
// package variables: the Lease is renewed every IdentityLeaseRenewInterval,
// and the collector deletes an expired identity Lease of another server
// every IdentityLeaseGCPeriod, keeping this server's.
func TestIdentityLeaseRenewalAndGC(t *testing.T) {
	r := startKapi(t, nil, func(o *app.Options) {
		o.IdentityLeaseDurationSeconds = 30
		o.IdentityLeaseRenewInterval = 20 * time.Millisecond
		o.IdentityLeaseGCPeriod = 50 * time.Millisecond
	})
	ctx := context.Background()
	leases := kubernetes.NewForConfigOrDie(r.rest).CoordinationV1().Leases("kube-system")
	id := r.cfg.APIServerID
	var first *coordinationv1.Lease
	waitFor(t, 10*time.Second, "the identity lease", func() error {
		var err error
		first, err = leases.Get(ctx, id, metav1.GetOptions{})
		return err
	})
	if d := first.Spec.LeaseDurationSeconds; d == nil || *d != 30 {
		t.Errorf("duration: got %v, want 30", d)
	}
	waitFor(t, 10*time.Second, "a renewal", func() error {
		l, err := leases.Get(ctx, id, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !l.Spec.RenewTime.After(first.Spec.RenewTime.Time) {
			return fmt.Errorf("renewTime still %v", l.Spec.RenewTime)
		}
		return nil
	})
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	for _, name := range []string{"apiserver-gone", "apiserver-live"} {
		renewed := old
		if name == "apiserver-live" {
			renewed = metav1.NewMicroTime(time.Now())
		}
		if _, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: new(name + "_x"), LeaseDurationSeconds: new(int32(3600)), RenewTime: &renewed},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the expired lease collected", func() error {
		if _, err := leases.Get(ctx, "apiserver-gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("got %v, want NotFound", err)
		}
		return nil
	})
	for _, name := range []string{"apiserver-live", id} {
		if _, err := leases.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
