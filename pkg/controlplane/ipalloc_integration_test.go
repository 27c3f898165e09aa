package controlplane_test

import (
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

// Expected values in these tests: upstream's IP allocator
// (pkg/registry/core/service/ipallocator: IPAddress name, labels and
// parentRef; errors in interfaces.go), the service REST's 422 message
// (pkg/registry/core/service/storage/alloc.go, allocIPs) and the
// servicecidrs controller (pkg/controller/servicecidrs: finalizer, Ready
// condition and its Terminating message), kubernetes v1.37.

const cidrFinalizer = "networking.k8s.io/service-cidr-finalizer"

func ipSvc(name, clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			ClusterIP: clusterIP,
			Selector:  map[string]string{"app": name},
			Ports:     []corev1.ServicePort{{Port: 80}},
		},
	}
}

// eventually polls f until it returns nil, for up to d.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	testwait.For(t, d, 100*time.Millisecond, "condition", f)
}

// managedIPs returns the IPAddresses the allocator manages, by name, as
// "<namespace>/<name>" of their parent Service.
func managedIPs(t *testing.T, cs kubernetes.Interface) map[string]string {
	t.Helper()
	l, err := cs.NetworkingV1().IPAddresses().List(t.Context(), metav1.ListOptions{LabelSelector: "ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ip := range l.Items {
		r := ip.Spec.ParentRef
		if r == nil || r.Group != "" || r.Resource != "services" {
			t.Errorf("IPAddress %s has parentRef %+v, want a core services reference", ip.Name, r)
			continue
		}
		out[ip.Name] = r.Namespace + "/" + r.Name
	}
	return out
}

// serviceIPs returns the ClusterIPs of every Service, as managedIPs.
func serviceIPs(t *testing.T, cs kubernetes.Interface) map[string]string {
	t.Helper()
	l, err := cs.CoreV1().Services("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range l.Items {
		for _, ip := range s.Spec.ClusterIPs {
			if ip != corev1.ClusterIPNone {
				out[ip] = s.Namespace + "/" + s.Name
			}
		}
	}
	return out
}

func sameAllocations(cs kubernetes.Interface, t *testing.T) error {
	got, want := managedIPs(t, cs), serviceIPs(t, cs)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("IPAddresses %v, want the services' cluster IPs %v", got, want)
	}
	return nil
}

func TestClusterIPAllocatorThroughServer(t *testing.T) {
	// Each backend's run waits out the ServiceCIDR controller's 10 s
	// deletion grace period: the two servers wait side by side.
	t.Run("memory", func(t *testing.T) { t.Parallel(); testClusterIPAllocator(t) })
	t.Run("etcd", func(t *testing.T) { t.Parallel(); testClusterIPAllocator(t, kapitest.WithEmbeddedEtcd()) })
}

func testClusterIPAllocator(t *testing.T, opts ...kapitest.Option) {
	srv := kapitest.Start(t, append(opts, kapitest.WithFlags("--service-cluster-ip-range=10.96.0.0/28"))...)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	ns := "ipalloc"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svcs := cs.CoreV1().Services(ns)

	// The "kubernetes" Service's address is an IPAddress too.
	k, err := cs.NetworkingV1().IPAddresses().Get(ctx, "10.96.0.1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := k.Spec.ParentRef; r == nil || *r != (networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}) {
		t.Errorf("kubernetes IPAddress parentRef %+v", r)
	}

	// The default ServiceCIDR: Ready and protected.
	eventually(t, 10*time.Second, func() error {
		sc, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.Equal(sc.Spec.CIDRs, []string{"10.96.0.0/28"}) || !slices.Contains(sc.Finalizers, cidrFinalizer) ||
			!apimeta.IsStatusConditionTrue(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady) {
			return fmt.Errorf("default ServiceCIDR %+v %+v", sc.ObjectMeta, sc.Status)
		}
		return nil
	})

	t.Run("create writes an IPAddress, delete removes it", func(t *testing.T) {
		s, err := svcs.Create(ctx, ipSvc("web", ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip, err := cs.NetworkingV1().IPAddresses().Get(ctx, s.Spec.ClusterIP, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantLabels := map[string]string{"ipaddress.kubernetes.io/ip-family": "IPv4", "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
		if fmt.Sprint(ip.Labels) != fmt.Sprint(wantLabels) || ip.UID == "" || ip.CreationTimestamp.IsZero() {
			t.Errorf("IPAddress metadata %+v", ip.ObjectMeta)
		}
		if r := ip.Spec.ParentRef; r == nil || *r != (networkingv1.ParentReference{Resource: "services", Namespace: ns, Name: "web"}) {
			t.Errorf("parentRef %+v", r)
		}
		// A taken address.
		_, err = svcs.Create(ctx, ipSvc("dup", s.Spec.ClusterIP), metav1.CreateOptions{})
		want := fmt.Sprintf(`spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: provided IP is already allocated`, s.Spec.ClusterIP, s.Spec.ClusterIP)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want 422 %s", err, want)
		}
		// An address in no ServiceCIDR.
		_, err = svcs.Create(ctx, ipSvc("out", "10.200.0.5"), metav1.CreateOptions{})
		want = `spec.clusterIPs: Invalid value: ["10.200.0.5"]: failed to allocate IP 10.200.0.5: the provided network does not match the current range`
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want 422 %s", err, want)
		}
		// A dry run writes no IPAddress (on an address web does not hold).
		dryIP := "10.96.0.9"
		if s.Spec.ClusterIP == dryIP {
			dryIP = "10.96.0.10"
		}
		dry, err := svcs.Create(ctx, ipSvc("dry", dryIP), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || dry.Spec.ClusterIP != dryIP {
			t.Fatalf("dry run: %v", err)
		}
		if _, err := cs.NetworkingV1().IPAddresses().Get(ctx, dryIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("dry run left an IPAddress: %v", err)
		}
		if err := svcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.NetworkingV1().IPAddresses().Get(ctx, s.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("got %v after the service's deletion, want NotFound", err)
		}
	})

	t.Run("create and delete in a loop leave IPAddresses consistent", func(t *testing.T) {
		for i := range 30 {
			name := fmt.Sprintf("loop-%d", i%7)
			if i%3 == 2 {
				_ = svcs.Delete(ctx, name, metav1.DeleteOptions{})
				continue
			}
			_, err := svcs.Create(ctx, ipSvc(name, ""), metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		// ClusterIP -> ExternalName releases, and back allocates.
		if _, err := svcs.Create(ctx, ipSvc("flip", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := svcs.Get(ctx, "flip", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}
		if _, err := svcs.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := sameAllocations(cs, t); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("user ServiceCIDRs extend the pool and are protected", func(t *testing.T) {
		l, err := svcs.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Items {
			if err := svcs.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		extra := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.97.0.0/29"}}}
		if _, err := cs.NetworkingV1().ServiceCIDRs().Create(ctx, extra, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() error {
			sc, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "extra", metav1.GetOptions{})
			if err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			if !slices.Contains(sc.Finalizers, cidrFinalizer) || c == nil || c.Status != metav1.ConditionTrue || c.Message != "Kubernetes Service CIDR is ready" {
				return fmt.Errorf("extra ServiceCIDR %v %+v", sc.Finalizers, sc.Status)
			}
			return nil
		})
		// The default /28 has 13 addresses for services (14 less the
		// kubernetes Service's); the next 6 come from extra.
		inExtra := 0
		for i := range 13 + 6 {
			s, err := svcs.Create(ctx, ipSvc(fmt.Sprintf("fill-%d", i), ""), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("service %d: %v", i, err)
			}
			if netip.MustParsePrefix("10.97.0.0/29").Contains(netip.MustParseAddr(s.Spec.ClusterIP)) {
				inExtra++
			}
		}
		if inExtra != 6 {
			t.Errorf("got %d addresses from extra, want 6", inExtra)
		}
		_, err = svcs.Create(ctx, ipSvc("full", ""), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "failed to allocate a serviceIP: range is full") {
			t.Errorf("got %v, want 500 failed to allocate a serviceIP: range is full", err)
		}
		if err := sameAllocations(cs, t); err != nil {
			t.Error(err)
		}

		// Deleting extra while its addresses are in use: it stays,
		// Ready=False Terminating, and allocates no more.
		for i := range 13 + 6 {
			s, err := svcs.Get(ctx, fmt.Sprintf("fill-%d", i), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Spec.ClusterIP != "10.97.0.3" && netip.MustParsePrefix("10.97.0.0/29").Contains(netip.MustParseAddr(s.Spec.ClusterIP)) {
				if err := svcs.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		holder := ""
		for ip, owner := range managedIPs(t, cs) {
			if ip == "10.97.0.3" {
				holder = owner
			}
		}
		if holder == "" {
			// 10.97.0.3 was not among them: take it now.
			if _, err := svcs.Create(ctx, ipSvc("holder", "10.97.0.3"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			holder = ns + "/holder"
		}
		if err := cs.NetworkingV1().ServiceCIDRs().Delete(ctx, "extra", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() error {
			sc, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "extra", metav1.GetOptions{})
			if err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			if sc.DeletionTimestamp == nil || c == nil || c.Status != metav1.ConditionFalse || c.Reason != networkingv1.ServiceCIDRReasonTerminating ||
				c.Message != "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR" {
				return fmt.Errorf("deleted extra ServiceCIDR %+v %+v", sc.ObjectMeta, sc.Status)
			}
			return nil
		})
		_, err = svcs.Create(ctx, ipSvc("late", "10.97.0.4"), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "the provided network does not match the current range") {
			t.Errorf("allocation from a deleted ServiceCIDR: got %v, want 422", err)
		}
		if err := svcs.Delete(ctx, strings.TrimPrefix(holder, ns+"/"), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Released: the finalizer goes after the grace period (10s).
		eventually(t, 30*time.Second, func() error {
			_, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "extra", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("extra ServiceCIDR still there: %v", err)
		})
		if err := sameAllocations(cs, t); err != nil {
			t.Error(err)
		}
	})
}

// TestClusterIPAllocatorAcrossRestart: on embedded etcd, the addresses of
// services created before a restart are never handed out again after it.
func TestClusterIPAllocatorAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	taken := map[string]bool{}
	for i := range 2 {
		srv, err := kapitest.StartE(dir, logger, kapitest.WithEmbeddedEtcd(), kapitest.WithFlags("--service-cluster-ip-range=10.96.0.0/28"))
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		cs := kubernetes.NewForConfigOrDie(srv.Config)
		ctx := t.Context()
		if i == 0 {
			for j := range 6 {
				s, err := cs.CoreV1().Services("default").Create(ctx, ipSvc(fmt.Sprintf("before-%d", j), ""), metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				taken[s.Spec.ClusterIP] = true
			}
		} else {
			for ip := range taken {
				_, err := cs.CoreV1().Services("default").Create(ctx, ipSvc("again", ip), metav1.CreateOptions{})
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
					t.Errorf("%s after restart: got %v, want already allocated", ip, err)
				}
			}
			// The rest of the range (13 less the 6) is free, then full.
			for j := range 13 - 6 {
				s, err := cs.CoreV1().Services("default").Create(ctx, ipSvc(fmt.Sprintf("after-%d", j), ""), metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if taken[s.Spec.ClusterIP] {
					t.Errorf("got %s again after restart", s.Spec.ClusterIP)
				}
			}
			if _, err := cs.CoreV1().Services("default").Create(ctx, ipSvc("full", ""), metav1.CreateOptions{}); err == nil {
				t.Error("got a 14th address from a /28, want range is full")
			}
			if err := sameAllocations(cs, t); err != nil {
				t.Error(err)
			}
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}
