package service

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

type env struct {
	main   *REST
	status *generic.StatusREST
	alloc  Allocators
	opts   generic.RESTOptions
}

// newEnv returns services on a fresh memory backend with the range cidr
// and node ports 30000-30000+ports-1.
func newEnv(t *testing.T, cidr string, ports int) *env {
	t.Helper()
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	return newEnvOn(t, b, cidr, ports)
}

// newEnvOn returns services on backend b (a second env on the same b is
// another kapi process, or a restarted one).
func newEnvOn(t *testing.T, b *memory.Backend, cidr string, ports int) *env {
	t.Helper()
	return newEnvMetrics(t, b, cidr, ports, nil)
}

// newEnvMetrics is newEnvOn with allocators recording in m.
func newEnvMetrics(t *testing.T, b *memory.Backend, cidr string, ports int, m *allocator.Metrics) *env {
	t.Helper()
	opts := generic.RESTOptions{Storage: generic.MemoryStorage(b)}
	leases := func(prefix string) generic.StorageConfig {
		return generic.StorageConfig{
			Resource:       coordinationv1.Resource("leases"),
			StorageVersion: coordinationv1.SchemeGroupVersion,
			Prefix:         prefix,
			NewFunc:        func() runtime.Object { return &coordinationv1.Lease{} },
			NewListFunc:    func() runtime.Object { return &coordinationv1.LeaseList{} },
		}
	}
	ipStore, _, err := opts.NewStorage(generic.StorageConfig{
		Resource:       networkingv1.Resource("ipaddresses"),
		StorageVersion: networkingv1.SchemeGroupVersion,
		Prefix:         "/networking.k8s.io/ipaddresses",
		NewFunc:        func() runtime.Object { return &networkingv1.IPAddress{} },
		NewListFunc:    func() runtime.Object { return &networkingv1.IPAddressList{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	portStore, _, err := opts.NewStorage(leases(allocator.PortKeyPrefix))
	if err != nil {
		t.Fatal(err)
	}
	ips, err := allocator.NewIPs(allocator.IPConfig{Addresses: ipStore, AddressPrefix: "/networking.k8s.io/ipaddresses", Default: netip.MustParsePrefix(cidr), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	np, err := allocator.NewPorts(portStore, allocator.PortRange{Base: 30000, Size: ports})
	if err != nil {
		t.Fatal(err)
	}
	np.SetMetrics(m)
	a := Allocators{IPs: ips, Ports: np}
	main, status, err := NewREST(opts, Config{Allocators: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(main.Destroy)
	return &env{main: main, status: status, alloc: a, opts: opts}
}

func ctx(ns string) context.Context { return registrytest.Context("", "v1", "services", ns) }

func svc(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func (e *env) create(t *testing.T, s *corev1.Service) *corev1.Service {
	t.Helper()
	obj, err := e.main.Create(ctx("ns"), s, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", s.Name, err)
	}
	return obj.(*corev1.Service)
}

func (e *env) update(t *testing.T, name string, mutate func(*corev1.Service)) (*corev1.Service, error) {
	t.Helper()
	obj, _, err := e.main.Update(ctx("ns"), name, registrytest.Mutated{Mutate: func(o runtime.Object) { mutate(o.(*corev1.Service)) }},
		nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Service), nil
}

func (e *env) ipTaken(t *testing.T, ip string) bool {
	t.Helper()
	has, err := e.alloc.IPs.Has(t.Context(), netip.MustParseAddr(ip))
	if err != nil {
		t.Fatal(err)
	}
	return has
}

func (e *env) portTaken(t *testing.T, p int32) bool {
	t.Helper()
	has, err := e.alloc.Ports.Has(t.Context(), int(p))
	if err != nil {
		t.Fatal(err)
	}
	return has
}

func (e *env) allocatedCount(t *testing.T) (int, int) {
	t.Helper()
	ips, err := e.alloc.IPs.Allocated(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ports, err := e.alloc.Ports.Allocated(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(ips), len(ports)
}

func TestServiceResource(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	if !e.main.NamespaceScoped() {
		t.Error("got cluster-scoped, want namespaced")
	}
	if got := e.main.ShortNames(); !slices.Equal(got, []string{"svc"}) {
		t.Errorf("got short names %v, want [svc]", got)
	}
	if got := e.main.Categories(); !slices.Equal(got, []string{"all"}) {
		t.Errorf("got categories %v, want [all]", got)
	}
	if got := e.main.GetSingularName(); got != "service" {
		t.Errorf("got singular %q, want service", got)
	}
}

func TestServiceCreateDefaultsAndAllocates(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	got := e.create(t, svc("web"))
	ip := got.Spec.ClusterIP
	if ip == "" || ip == "10.0.0.1" || !slices.Equal(got.Spec.ClusterIPs, []string{ip}) {
		t.Fatalf("got clusterIP %q clusterIPs %v, want one allocated address (not the reserved 10.0.0.1)", ip, got.Spec.ClusterIPs)
	}
	if !e.ipTaken(t, ip) {
		t.Errorf("got %s not allocated, want allocated", ip)
	}
	p := got.Spec.Ports[0]
	if p.Protocol != corev1.ProtocolTCP || p.TargetPort != intstr.FromInt32(80) || p.NodePort != 0 {
		t.Errorf("got port %+v, want TCP, targetPort 80, no nodePort", p)
	}
	if got.Spec.Type != corev1.ServiceTypeClusterIP || got.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("got type %q affinity %q, want ClusterIP None", got.Spec.Type, got.Spec.SessionAffinity)
	}
	if got.Spec.InternalTrafficPolicy == nil || *got.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
		t.Errorf("got internalTrafficPolicy %v, want Cluster", got.Spec.InternalTrafficPolicy)
	}
	if got.Spec.ExternalTrafficPolicy != "" {
		t.Errorf("got externalTrafficPolicy %q, want none for ClusterIP", got.Spec.ExternalTrafficPolicy)
	}
	if got.Spec.IPFamilyPolicy == nil || *got.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack ||
		!slices.Equal(got.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
		t.Errorf("got ipFamilyPolicy %v families %v, want SingleStack [IPv4]", got.Spec.IPFamilyPolicy, got.Spec.IPFamilies)
	}
}

func TestServiceCreateTypes(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	np := e.create(t, svc("np", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports = []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", Port: 53}, {Name: "web", Port: 80}}
	}))
	ports := np.Spec.Ports
	if ports[0].NodePort == 0 || ports[0].NodePort != ports[1].NodePort || ports[2].NodePort == ports[0].NodePort || ports[2].NodePort == 0 {
		t.Errorf("got node ports %d %d %d, want 53/UDP and 53/TCP sharing one, 80 another", ports[0].NodePort, ports[1].NodePort, ports[2].NodePort)
	}
	if np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Errorf("got externalTrafficPolicy %q, want Cluster", np.Spec.ExternalTrafficPolicy)
	}

	lb := e.create(t, svc("lb", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}))
	if lb.Spec.AllocateLoadBalancerNodePorts == nil || !*lb.Spec.AllocateLoadBalancerNodePorts {
		t.Errorf("got allocateLoadBalancerNodePorts %v, want true", lb.Spec.AllocateLoadBalancerNodePorts)
	}
	if lb.Spec.Ports[0].NodePort == 0 || lb.Spec.HealthCheckNodePort == 0 || !e.portTaken(t, lb.Spec.HealthCheckNodePort) {
		t.Errorf("got nodePort %d healthCheckNodePort %d, want both allocated", lb.Spec.Ports[0].NodePort, lb.Spec.HealthCheckNodePort)
	}

	noPorts := e.create(t, svc("lb-noports", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		no := false
		s.Spec.AllocateLoadBalancerNodePorts = &no
	}))
	if noPorts.Spec.Ports[0].NodePort != 0 {
		t.Errorf("got nodePort %d with allocateLoadBalancerNodePorts=false, want none", noPorts.Spec.Ports[0].NodePort)
	}

	headless := e.create(t, svc("headless", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }))
	if !slices.Equal(headless.Spec.ClusterIPs, []string{"None"}) ||
		!slices.Equal(headless.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
		t.Errorf("got clusterIPs %v families %v, want [None] [IPv4]", headless.Spec.ClusterIPs, headless.Spec.IPFamilies)
	}
	selectorless := e.create(t, svc("headless-selectorless", func(s *corev1.Service) {
		s.Spec.ClusterIP = corev1.ClusterIPNone
		s.Spec.Selector = nil
	}))
	if p := selectorless.Spec.IPFamilyPolicy; p == nil || *p != corev1.IPFamilyPolicyRequireDualStack || len(selectorless.Spec.IPFamilies) != 2 {
		t.Errorf("got policy %v families %v, want RequireDualStack with both families (kube's headless selectorless default)", p, selectorless.Spec.IPFamilies)
	}

	ext := e.create(t, svc("ext", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeExternalName
		s.Spec.ExternalName = "example.com"
		s.Spec.Ports = nil
	}))
	if ext.Spec.ClusterIP != "" || ext.Spec.IPFamilyPolicy != nil || len(ext.Spec.IPFamilies) != 0 || ext.Spec.InternalTrafficPolicy != nil {
		t.Errorf("got %+v, want no cluster IP, IP families or internal traffic policy for ExternalName", ext.Spec)
	}
	// 3 services with cluster IPs; 4 node ports (np: 2, lb: 1 + health check).
	if ips, ports := e.allocatedCount(t); ips != 3 || ports != 4 {
		t.Errorf("got %d IPs and %d ports allocated, want 3 and 4", ips, ports)
	}
}

func TestServiceRequestedValues(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	got := e.create(t, svc("a", func(s *corev1.Service) {
		s.Spec.ClusterIP = "10.0.0.50"
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30042
	}))
	if got.Spec.ClusterIP != "10.0.0.50" || got.Spec.Ports[0].NodePort != 30042 {
		t.Fatalf("got %s/%d, want 10.0.0.50/30042", got.Spec.ClusterIP, got.Spec.Ports[0].NodePort)
	}
	for _, tc := range []struct {
		name    string
		mutate  func(*corev1.Service)
		code    int32
		message string
	}{
		{"ip taken", func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.50" }, 422,
			`Service "x" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.50"]: failed to allocate IP 10.0.0.50: provided IP is already allocated`},
		{"ip out of range", func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.1.0.5"}; s.Spec.ClusterIP = "10.1.0.5" }, 422,
			`Service "x" is invalid: spec.clusterIPs: Invalid value: ["10.1.0.5"]: failed to allocate IP 10.1.0.5: the provided network does not match the current range`},
		{"ipv6 on an ipv4 cluster", func(s *corev1.Service) { s.Spec.ClusterIP = "fd00::5" }, 422,
			`Service "x" is invalid: spec.clusterIPs[0]: Invalid value: ["fd00::5"]: IPv6 is not configured on this cluster`},
		{"dual stack required", func(s *corev1.Service) { p := corev1.IPFamilyPolicyRequireDualStack; s.Spec.IPFamilyPolicy = &p }, 422,
			`Service "x" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{"port taken", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort; s.Spec.Ports[0].NodePort = 30042 }, 422,
			`Service "x" is invalid: spec.ports[0].nodePort: Invalid value: 30042: provided port is already allocated`},
		{"port out of range", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort; s.Spec.Ports[0].NodePort = 31000 }, 422,
			`Service "x" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30099`},
		{"malformed ip", func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.300" }, 422, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, beforePorts := e.allocatedCount(t)
			_, err := e.main.Create(ctx("ns"), svc("x", tc.mutate), nil, &metav1.CreateOptions{})
			st := registrytest.Status(t, err)
			if st.Code != tc.code || (tc.message != "" && st.Message != tc.message) {
				t.Errorf("got %d %q, want %d %q", st.Code, st.Message, tc.code, tc.message)
			}
			if ips, ports := e.allocatedCount(t); ips != before || ports != beforePorts {
				t.Errorf("got %d IPs %d ports allocated after a failed create, want %d and %d", ips, ports, before, beforePorts)
			}
		})
	}
}

// TestServiceFailedCreateReleases: allocations of a create that fails
// later (validation, admission, a taken name) are released.
func TestServiceFailedCreateReleases(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	e.create(t, svc("taken"))
	reject := func(context.Context, runtime.Object) error {
		return apierrors.NewForbidden(Resource, "x", fmt.Errorf("no"))
	}
	for _, tc := range []struct {
		name string
		s    *corev1.Service
		v    func(context.Context, runtime.Object) error
	}{
		{"invalid port name", svc("bad", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].Name = "Not_A_Label"
		}), nil},
		{"admission", svc("denied", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), reject},
		{"name taken", svc("taken", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.main.Create(ctx("ns"), tc.s, tc.v, &metav1.CreateOptions{}); err == nil {
				t.Fatal("got no error, want one")
			}
			if ips, ports := e.allocatedCount(t); ips != 1 || ports != 0 {
				t.Errorf("got %d IPs and %d ports allocated, want only the first service's IP", ips, ports)
			}
		})
	}
}

func TestServiceDryRun(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	dry := &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	obj, err := e.main.Create(ctx("ns"), svc("a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), nil, dry)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Service)
	if got.Spec.ClusterIP == "" || got.Spec.Ports[0].NodePort == 0 {
		t.Errorf("got %q/%d, want a dry run to show allocated values", got.Spec.ClusterIP, got.Spec.Ports[0].NodePort)
	}
	if ips, ports := e.allocatedCount(t); ips != 0 || ports != 0 {
		t.Errorf("got %d IPs %d ports allocated by a dry run, want none", ips, ports)
	}
	real := e.create(t, svc("a"))
	if _, _, err := e.main.Delete(ctx("ns"), "a", nil, &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if !e.ipTaken(t, real.Spec.ClusterIP) {
		t.Error("got the IP released by a dry-run delete, want kept")
	}
}

func TestServiceUpdate(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	orig := e.create(t, svc("a"))
	ip := orig.Spec.ClusterIP

	// A PUT of the original manifest (no clusterIP) keeps the allocated IP.
	put, _, err := e.main.Update(ctx("ns"), "a", registrytest.Updated{Obj: svc("a", func(s *corev1.Service) { s.Labels = map[string]string{"v": "2"} })},
		nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := put.(*corev1.Service); got.Spec.ClusterIP != ip || got.Labels["v"] != "2" {
		t.Errorf("got clusterIP %q labels %v, want %s kept and the label set", got.Spec.ClusterIP, got.Labels, ip)
	}

	// clusterIP is immutable (other is an address apart from the random
	// one a got).
	other := "10.0.0.77"
	if ip == other {
		other = "10.0.0.78"
	}
	_, err = e.update(t, "a", func(s *corev1.Service) { s.Spec.ClusterIP = other; s.Spec.ClusterIPs = []string{other} })
	if got := registrytest.Causes(t, err); !slices.Contains(got, "FieldValueInvalid spec.clusterIPs[0]") {
		t.Errorf("got causes %v, want spec.clusterIPs[0] may not change", got)
	}
	if e.ipTaken(t, other) {
		t.Errorf("got %s allocated by a rejected update, want free", other)
	}

	// ClusterIP -> NodePort allocates node ports; -> ClusterIP releases them.
	np, err := e.update(t, "a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	if err != nil {
		t.Fatal(err)
	}
	port := np.Spec.Ports[0].NodePort
	if port == 0 || !e.portTaken(t, port) || np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Fatalf("got nodePort %d etp %q, want one allocated and Cluster", port, np.Spec.ExternalTrafficPolicy)
	}
	// A PUT without the node port keeps it.
	kept, err := e.update(t, "a", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 0 })
	if err != nil {
		t.Fatal(err)
	}
	if kept.Spec.Ports[0].NodePort != port {
		t.Errorf("got nodePort %d after an update without it, want %d kept", kept.Spec.Ports[0].NodePort, port)
	}
	// Changing the node port takes the new one and releases the old.
	target := int32(30099)
	if port == target {
		target = 30098
	}
	moved, err := e.update(t, "a", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = target })
	if err != nil {
		t.Fatal(err)
	}
	if moved.Spec.Ports[0].NodePort != target || !e.portTaken(t, target) || e.portTaken(t, port) {
		t.Errorf("got nodePort %d (%d taken %v, %d taken %v), want %d taken and %d released",
			moved.Spec.Ports[0].NodePort, target, e.portTaken(t, target), port, e.portTaken(t, port), target, port)
	}
	back, err := e.update(t, "a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP })
	if err != nil {
		t.Fatal(err)
	}
	if back.Spec.Ports[0].NodePort != 0 || e.portTaken(t, target) || back.Spec.ExternalTrafficPolicy != "" {
		t.Errorf("got nodePort %d etp %q (%d taken %v), want the node port dropped and released", back.Spec.Ports[0].NodePort, back.Spec.ExternalTrafficPolicy, target, e.portTaken(t, target))
	}

	// ClusterIP -> ExternalName releases the IP; back allocates one.
	ext, err := e.update(t, "a", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeExternalName
		s.Spec.ExternalName = "example.com"
	})
	if err != nil {
		t.Fatal(err)
	}
	if ext.Spec.ClusterIP != "" || ext.Spec.IPFamilyPolicy != nil || e.ipTaken(t, ip) {
		t.Errorf("got clusterIP %q policy %v (%s taken %v), want none and released", ext.Spec.ClusterIP, ext.Spec.IPFamilyPolicy, ip, e.ipTaken(t, ip))
	}
	// kube-apiserver v1.37.2 (probed 2026-11-28, kubectl patch of a
	// ClusterIP Service to ExternalName): its reads show no
	// internalTrafficPolicy for an ExternalName Service.
	if ext.Spec.InternalTrafficPolicy != nil {
		t.Errorf("got internalTrafficPolicy %q on an ExternalName Service, want none", *ext.Spec.InternalTrafficPolicy)
	}
	again, err := e.update(t, "a", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Spec.ExternalName = ""
		s.Spec.ClusterIP = "10.0.0.9"
	})
	if err != nil {
		t.Fatal(err)
	}
	if again.Spec.ClusterIP != "10.0.0.9" || !e.ipTaken(t, "10.0.0.9") {
		t.Errorf("got clusterIP %q, want 10.0.0.9 allocated", again.Spec.ClusterIP)
	}
	if ips, ports := e.allocatedCount(t); ips != 1 || ports != 0 {
		t.Errorf("got %d IPs %d ports allocated, want 1 and 0", ips, ports)
	}
}

// TestServiceUpdateFailureReleases: what an update allocated is released
// when it fails.
func TestServiceUpdateFailureReleases(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	e.create(t, svc("a"))
	_, err := e.update(t, "a", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.SessionAffinity = "Sticky" // invalid
	})
	if err == nil {
		t.Fatal("got no error, want 422")
	}
	if _, ports := e.allocatedCount(t); ports != 0 {
		t.Errorf("got %d ports allocated after a failed update, want 0", ports)
	}
}

func TestServiceCreateOnPut(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	obj, created, err := e.main.Update(ctx("ns"), "p", registrytest.Updated{Obj: svc("p")}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || !created {
		t.Fatalf("got created=%v err=%v, want created", created, err)
	}
	if ip := obj.(*corev1.Service).Spec.ClusterIP; ip == "" || !e.ipTaken(t, ip) {
		t.Errorf("got clusterIP %q, want one allocated", ip)
	}
}

func TestServiceDeleteReleases(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	s := e.create(t, svc("a", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}))
	obj, deleted, err := e.main.Delete(ctx("ns"), "a", nil, &metav1.DeleteOptions{})
	if err != nil || !deleted {
		t.Fatalf("got deleted=%v err=%v", deleted, err)
	}
	if _, ok := obj.(*corev1.Service); !ok {
		t.Errorf("got %T, want the deleted Service", obj)
	}
	if ips, ports := e.allocatedCount(t); ips != 0 || ports != 0 {
		t.Errorf("got %d IPs %d ports allocated after delete, want none (had %s, %d, %d)", ips, ports,
			s.Spec.ClusterIP, s.Spec.Ports[0].NodePort, s.Spec.HealthCheckNodePort)
	}

	// A finalizer defers the release to the update that removes it.
	e.create(t, svc("b", func(s *corev1.Service) { s.Finalizers = []string{"example.com/hold"} }))
	if _, deleted, err := e.main.Delete(ctx("ns"), "b", nil, &metav1.DeleteOptions{}); err != nil || deleted {
		t.Fatalf("got deleted=%v err=%v, want pending", deleted, err)
	}
	if ips, _ := e.allocatedCount(t); ips != 1 {
		t.Errorf("got %d IPs while the service is pending deletion, want 1", ips)
	}
	if _, err := e.update(t, "b", func(s *corev1.Service) { s.Finalizers = nil }); err != nil {
		t.Fatal(err)
	}
	if ips, _ := e.allocatedCount(t); ips != 0 {
		t.Errorf("got %d IPs after the last finalizer went, want 0", ips)
	}
}

// Deleting a collection releases what each deleted Service held, as
// deleting them one by one does (upstream's services have deletecollection).
func TestServiceDeleteCollectionReleases(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	for _, name := range []string{"a", "b", "c"} {
		e.create(t, svc(name, func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Labels = map[string]string{"drop": fmt.Sprint(name != "c")}
		}))
	}
	if ips, ports := e.allocatedCount(t); ips != 3 || ports != 3 {
		t.Fatalf("got %d IPs %d ports after three creates, want 3 and 3", ips, ports)
	}
	sel, err := labels.Parse("drop=true")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := e.main.DeleteCollection(ctx("ns"), nil, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if list, ok := obj.(*corev1.ServiceList); !ok || len(list.Items) != 2 {
		t.Errorf("got %T %v, want the list of the two deleted Services", obj, obj)
	}
	if ips, ports := e.allocatedCount(t); ips != 1 || ports != 1 {
		t.Errorf("got %d IPs %d ports after deleting two of three, want 1 and 1", ips, ports)
	}
	if _, err := e.main.Get(ctx("ns"), "c", &metav1.GetOptions{}); err != nil {
		t.Errorf("get the kept service: %v", err)
	}
}

func TestServiceStatus(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	e.create(t, svc("lb", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }))
	ingress := []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	obj, _, err := e.status.Update(ctx("ns"), "lb", registrytest.Mutated{Mutate: func(o runtime.Object) {
		s := o.(*corev1.Service)
		s.Status.LoadBalancer.Ingress = ingress
		s.Spec.Type = corev1.ServiceTypeClusterIP // ignored by /status
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Service)
	if got.Spec.Type != corev1.ServiceTypeLoadBalancer || len(got.Status.LoadBalancer.Ingress) != 1 {
		t.Fatalf("got type %q ingress %v, want the status written and the spec kept", got.Spec.Type, got.Status.LoadBalancer.Ingress)
	}
	if m := got.Status.LoadBalancer.Ingress[0].IPMode; m == nil || *m != corev1.LoadBalancerIPModeVIP {
		t.Errorf("got ipMode %v, want VIP defaulted", m)
	}
	// The main resource keeps the status.
	obj, err = e.update(t, "lb", func(s *corev1.Service) { s.Status = corev1.ServiceStatus{} })
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.(*corev1.Service).Status.LoadBalancer.Ingress) != 1 {
		t.Error("got the status cleared by a main-resource update, want kept")
	}
	_, _, err = e.status.Update(ctx("ns"), "lb", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Service).Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "nope"}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := registrytest.Causes(t, err); !slices.Equal(got, []string{"FieldValueInvalid status.loadBalancer.ingress[0].ip"}) {
		t.Errorf("got causes %v, want the ingress IP invalid", got)
	}
}

func TestServiceGenerateName(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	s := svc("")
	s.GenerateName = "gen-"
	got := e.create(t, s)
	if !strings.HasPrefix(got.Name, "gen-") || len(got.Name) != len("gen-")+5 {
		t.Errorf("got name %q, want gen- and 5 random characters", got.Name)
	}
	all, err := e.alloc.IPs.Allocated(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if al := all[netip.MustParseAddr(got.Spec.ClusterIP)]; al.Owner != "services/ns/"+got.Name {
		t.Errorf("got owner %q, want services/ns/%s", al.Owner, got.Name)
	}
}

func TestServiceFieldSelectors(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	e.create(t, svc("a"))
	e.create(t, svc("b", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }))
	for _, tc := range []struct {
		selector string
		want     []string
	}{
		{"metadata.name=a", []string{"a"}},
		{"metadata.namespace=ns", []string{"a", "b"}},
		{"spec.type=NodePort", []string{"b"}},
	} {
		sel := fields.ParseSelectorOrDie(tc.selector)
		obj, err := e.main.List(ctx("ns"), &metainternalversion.ListOptions{FieldSelector: sel})
		if err != nil {
			t.Fatalf("%s: %v", tc.selector, err)
		}
		var got []string
		for _, s := range obj.(*corev1.ServiceList).Items {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.selector, got, tc.want)
		}
	}
	if err := AddFieldLabelConversions(runtime.NewScheme()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := FieldLabelConversion("spec.selector", "x"); err == nil || err.Error() != "field label not supported: spec.selector" {
		t.Errorf("got %v, want field label not supported", err)
	}
}

// TestServiceConcurrentCreates: many goroutines creating services through
// two servers on one storage never get the same IP or node port; the range
// ends full with a 500 as kube.
func TestServiceConcurrentCreates(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	servers := []*env{newEnvOn(t, b, "10.0.0.0/26", 80), newEnvOn(t, b, "10.0.0.0/26", 80)}
	const workers = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created []*corev1.Service
		errs    []error
	)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				s := svc(fmt.Sprintf("w%d-%d", w, i), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
				obj, err := servers[w%2].main.Create(ctx("ns"), s, nil, &metav1.CreateOptions{})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				created = append(created, obj.(*corev1.Service))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// 61 usable addresses in a /26 without the reserved one.
	if len(created) != 61 {
		t.Errorf("got %d services, want 61", len(created))
	}
	ips, ports := map[string]string{}, map[int32]string{}
	for _, s := range created {
		if other, dup := ips[s.Spec.ClusterIP]; dup {
			t.Errorf("got %s for %s and %s", s.Spec.ClusterIP, other, s.Name)
		}
		ips[s.Spec.ClusterIP] = s.Name
		if other, dup := ports[s.Spec.Ports[0].NodePort]; dup {
			t.Errorf("got node port %d for %s and %s", s.Spec.Ports[0].NodePort, other, s.Name)
		}
		ports[s.Spec.Ports[0].NodePort] = s.Name
	}
	for _, err := range errs {
		st := registrytest.Status(t, err)
		if st.Code != 500 || st.Message != "Internal error occurred: failed to allocate a serviceIP: range is full" {
			t.Errorf("got %d %q, want 500 range is full", st.Code, st.Message)
		}
	}
	if n, p := servers[0].allocatedCount(t); n != 61 || p != 61 {
		t.Errorf("got %d IPs %d ports allocated, want 61 each (failed creates release their ports)", n, p)
	}
}

// TestServiceRestart: a new server on the same storage sees the
// allocations of the old one.
func TestServiceRestart(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	first := newEnvOn(t, b, "10.0.0.0/24", 100)
	s := first.create(t, svc("a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }))
	second := newEnvOn(t, b, "10.0.0.0/24", 100)
	_, err := second.main.Create(ctx("ns"), svc("b", func(x *corev1.Service) { x.Spec.ClusterIP = s.Spec.ClusterIP }), nil, &metav1.CreateOptions{})
	if st := registrytest.Status(t, err); st.Code != 422 || !strings.Contains(st.Message, "provided IP is already allocated") {
		t.Errorf("got %d %q, want the IP already allocated", st.Code, st.Message)
	}
	if _, _, err := second.main.Delete(ctx("ns"), "a", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if first.ipTaken(t, s.Spec.ClusterIP) || first.portTaken(t, s.Spec.Ports[0].NodePort) {
		t.Error("got the allocations kept after the other server deleted the service, want released")
	}
}

func TestServiceRepair(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	held := e.create(t, svc("held", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }))
	// A leak: allocations no service holds (chosen apart from the held
	// service's random ones).
	leakIP, leakPort := "10.0.0.200", int32(30077)
	if held.Spec.ClusterIP == leakIP {
		leakIP = "10.0.0.201"
	}
	if held.Spec.Ports[0].NodePort == leakPort {
		leakPort = 30078
	}
	if err := e.alloc.IPs.Allocate(t.Context(), netip.MustParseAddr(leakIP), allocator.ServiceRef("ns", "gone"), false); err != nil {
		t.Fatal(err)
	}
	if err := e.alloc.Ports.Allocate(t.Context(), int(leakPort), "services/ns/gone", false); err != nil {
		t.Fatal(err)
	}
	// A lost allocation: a service whose IP is not allocated.
	if err := e.alloc.IPs.Release(t.Context(), netip.MustParseAddr(held.Spec.ClusterIP)); err != nil {
		t.Fatal(err)
	}
	// Young leaks are left alone (a write may be in flight).
	res, err := e.main.Repair(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 0 || res.Restored != 1 || !e.ipTaken(t, held.Spec.ClusterIP) {
		t.Errorf("got %+v, want the lost IP restored and nothing released", res)
	}
	res, err = e.main.Repair(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 2 || e.ipTaken(t, leakIP) || e.portTaken(t, leakPort) || !e.portTaken(t, held.Spec.Ports[0].NodePort) {
		t.Errorf("got %+v, want the two leaks released and the held port kept", res)
	}
}
