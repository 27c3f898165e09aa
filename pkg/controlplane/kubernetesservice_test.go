package controlplane

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

func newKubernetesService(t *testing.T) (*kubernetesService, serviceStores) {
	t.Helper()
	c := Config{Logger: slog.New(slog.DiscardHandler)}
	if err := c.complete(); err != nil {
		t.Fatal(err)
	}
	b, err := newStorageBuilder(registrytest.Options(t), c, builtinGroups)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.destroy)
	svcs, err := servicesOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return &kubernetesService{
		services:  svcs.services,
		endpoints: svcs.endpoints,
		slices:    svcs.slices,
		leases:    svcs.apiserverLeases,
		leaseTTL:  leaseTTL(time.Second),
		clusterIP: svcs.allocators.IPs.First(),
		address:   c.PublicAddress,
		port:      6443,
		interval:  10 * time.Millisecond,
		repairAge: time.Hour,
		logger:    c.Logger,
	}, svcs
}

func getObj[T runtime.Object](t *testing.T, g rest.Getter, resource string) (T, error) {
	t.Helper()
	var zero T
	ctx := systemContext(registrytest.Context("", "v1", resource, metav1.NamespaceDefault), metav1.NamespaceDefault)
	obj, err := g.Get(ctx, kubernetesServiceName, &metav1.GetOptions{})
	if err != nil {
		return zero, err
	}
	return obj.(T), nil
}

func checkKubernetesObjects(t *testing.T, svcs serviceStores, addresses ...string) {
	t.Helper()
	svc, err := getObj[*corev1.Service](t, svcs.services, "services")
	if err != nil {
		t.Fatalf("get service: %v", err)
	}
	if svc.Spec.ClusterIP != "10.0.0.1" || svc.Spec.Type != corev1.ServiceTypeClusterIP ||
		len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "https" || svc.Spec.Ports[0].Port != 443 ||
		svc.Spec.Ports[0].TargetPort != intstr.FromInt32(6443) || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP ||
		svc.Spec.SessionAffinity != corev1.ServiceAffinityNone ||
		svc.Labels["component"] != "apiserver" || svc.Labels["provider"] != "kubernetes" {
		t.Errorf("got service %+v labels %v, want kube's kubernetes service on 10.0.0.1", svc.Spec, svc.Labels)
	}
	ep, err := getObj[*corev1.Endpoints](t, svcs.endpoints, "endpoints")
	if err != nil {
		t.Fatalf("get endpoints: %v", err)
	}
	var gotAddrs []string
	if len(ep.Subsets) == 1 {
		for _, a := range ep.Subsets[0].Addresses {
			gotAddrs = append(gotAddrs, a.IP)
		}
	}
	if !slices.Equal(gotAddrs, addresses) ||
		len(ep.Subsets[0].Ports) != 1 || ep.Subsets[0].Ports[0].Port != 6443 || ep.Subsets[0].Ports[0].Name != "https" ||
		ep.UID == "" || ep.CreationTimestamp.IsZero() {
		t.Errorf("got endpoints %+v (uid %q), want %v on 6443 https", ep.Subsets, ep.UID, addresses)
	}
	s, err := getObj[*discoveryv1.EndpointSlice](t, svcs.slices, "endpointslices")
	if err != nil {
		t.Fatalf("get endpointslice: %v", err)
	}
	var sliceAddrs []string
	for _, e := range s.Endpoints {
		if e.Conditions.Ready == nil || !*e.Conditions.Ready {
			t.Errorf("got endpoint %v not ready, want ready", e.Addresses)
		}
		sliceAddrs = append(sliceAddrs, e.Addresses...)
	}
	if s.Labels[discoveryv1.LabelServiceName] != "kubernetes" || s.AddressType != discoveryv1.AddressTypeIPv4 ||
		!slices.Equal(sliceAddrs, addresses) || len(s.Ports) != 1 || *s.Ports[0].Port != 6443 || *s.Ports[0].Name != "https" {
		t.Errorf("got endpointslice %+v, want %v on 6443 https", s, addresses)
	}
}

func TestKubernetesServiceReconcile(t *testing.T) {
	k, svcs := newKubernetesService(t)
	ctx := t.Context()
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkKubernetesObjects(t, svcs, "127.0.0.1")
	// Reconciling again changes nothing.
	before, _ := getObj[*corev1.Endpoints](t, svcs.endpoints, "endpoints")
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	after, _ := getObj[*corev1.Endpoints](t, svcs.endpoints, "endpoints")
	if before.ResourceVersion != after.ResourceVersion {
		t.Errorf("got resourceVersion %s -> %s, want no write", before.ResourceVersion, after.ResourceVersion)
	}

	// Changed ports stay: kube-apiserver v1.37.2 only creates the Service
	// (checked on the reference: a port patched to 444 stays 444).
	sctx := systemContext(ctx, metav1.NamespaceDefault)
	setPort := func(port int32) {
		t.Helper()
		if _, _, err := svcs.services.Update(sctx, "kubernetes", registrytest.Mutated{Mutate: func(o runtime.Object) {
			o.(*corev1.Service).Spec.Ports[0].Port = port
		}}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPort(8443)
	changed, _ := getObj[*corev1.Service](t, svcs.services, "services")
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if svc, _ := getObj[*corev1.Service](t, svcs.services, "services"); svc.ResourceVersion != changed.ResourceVersion || svc.Spec.Ports[0].Port != 8443 {
		t.Errorf("got service port %d (resourceVersion %s -> %s), want 8443 left as it was", svc.Spec.Ports[0].Port, changed.ResourceVersion, svc.ResourceVersion)
	}
	setPort(443)
	// A new advertise address joins the endpoints; the old one stays
	// until its lease is gone.
	k.address = net.ParseIP("192.0.2.7")
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkKubernetesObjects(t, svcs, "127.0.0.1", "192.0.2.7")
	if err := svcs.apiserverLeases.Delete(ctx, apiserverLeasePrefix+"/127.0.0.1", &coordinationv1.Lease{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkKubernetesObjects(t, svcs, "192.0.2.7")

	// Deleted objects are re-created, the service with the same IP.
	// Deleting the service deletes its Endpoints too, as kube.
	for _, d := range []rest.GracefulDeleter{svcs.services, svcs.slices} {
		if _, _, err := d.Delete(sctx, "kubernetes", nil, &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := getObj[*corev1.Endpoints](t, svcs.endpoints, "endpoints"); !apierrors.IsNotFound(err) {
		t.Errorf("got %v for the endpoints of the deleted service, want NotFound", err)
	}
	if err := k.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkKubernetesObjects(t, svcs, "192.0.2.7")
	if has, _ := svcs.allocators.IPs.Has(ctx, k.clusterIP); !has {
		t.Error("got 10.0.0.1 not allocated, want held by the kubernetes service")
	}
}

// TestKubernetesServiceRun: the loop reconciles at start and again after
// a deletion, and ends with its context.
func TestKubernetesServiceRun(t *testing.T) {
	k, svcs := newKubernetesService(t)
	ctx, cancel := context.WithCancel(t.Context())
	first, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		k.run(ctx, first)
	}()
	<-first
	checkKubernetesObjects(t, svcs, "127.0.0.1")
	sctx := systemContext(ctx, metav1.NamespaceDefault)
	if _, _, err := svcs.endpoints.Delete(sctx, "kubernetes", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := getObj[*corev1.Endpoints](t, svcs.endpoints, "endpoints")
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("got %v, want the endpoints re-created", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not end with its context")
	}
}

// TestKubernetesServiceSeveralServers: API servers sharing the storage all
// appear in the endpoints; one that stops removes itself, an expired
// lease drops out.
func TestKubernetesServiceSeveralServers(t *testing.T) {
	a, svcs := newKubernetesService(t)
	a.address = net.ParseIP("192.0.2.1")
	b := *a
	b.address = net.ParseIP("192.0.2.2")
	c := *a
	c.address = net.ParseIP("192.0.2.3")
	ctx := t.Context()
	for _, k := range []*kubernetesService{a, &b, &c} {
		if err := k.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkKubernetesObjects(t, svcs, "192.0.2.1", "192.0.2.2", "192.0.2.3")

	// b stops.
	runCtx, cancel := context.WithCancel(ctx)
	first, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		b.run(runCtx, first)
	}()
	<-first
	cancel()
	<-done
	checkKubernetesObjects(t, svcs, "192.0.2.1", "192.0.2.3")

	// c's lease expires.
	expired := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	err := svcs.apiserverLeases.GuaranteedUpdate(ctx, apiserverLeasePrefix+"/192.0.2.3", &coordinationv1.Lease{}, false, nil,
		func(in runtime.Object) (runtime.Object, error) {
			l := in.(*coordinationv1.Lease).DeepCopy()
			l.Spec.RenewTime = &expired
			return l, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkKubernetesObjects(t, svcs, "192.0.2.1")
}

func TestConfigDefaults(t *testing.T) {
	var c Config
	if err := c.complete(); err != nil {
		t.Fatal(err)
	}
	if c.ServiceClusterIPRange.String() != "10.0.0.0/24" || c.ServiceNodePortRange != allocator.DefaultNodePortRange ||
		!c.PublicAddress.Equal(net.IPv4(127, 0, 0, 1)) || c.SecurePort != 6443 || c.KubernetesServiceInterval != 10*time.Second {
		t.Errorf("got %+v, want kube's defaults", c)
	}
	bad := Config{SecurePort: 70000}
	if err := bad.complete(); err == nil {
		t.Error("got no error for port 70000, want one")
	}
}
