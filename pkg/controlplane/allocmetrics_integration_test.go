package controlplane_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// The expected values of these tests are kubernetes v1.37.2's, read from
// pkg/registry/core/service/ipallocator/ipallocator.go (Allocator:
// createIPAddress counts an allocation or, on a failed write, an error in
// its scope and sets the gauges from Used and Free; allocateService is
// scope "static", checks nothing on a dry run; allocateNextService is
// "dynamic", counts an error when the range is full, returns on a dry
// run; release sets the gauges once the IPAddress is deleted),
// cidrallocator.go (MetaAllocator: an address in no ServiceCIDR fails
// before any allocator counts; hostsPerNetwork: a /29 has 6 addresses),
// portallocator/allocator.go (PortAllocator: Allocate counts "static"
// errors for a port out of the range or taken, AllocateNext "dynamic"
// ones when full, Release sets the gauges), portallocator/operation.go
// (a dry run never calls the allocator), storage/alloc.go (the ClusterIP
// is allocated before the NodePorts, and released when a later
// allocation fails), both metrics.go files (names, labels, help; the
// NodePort gauges are plain gauges, 0 until the first allocation or
// release), and the reference kube-apiserver v1.37.2's /metrics after the
// same requests (the counters equal; its gauges read its informer's
// cache after each write, which may lag one write behind, where kapi's
// count what storage holds when /metrics is read). The memory backend (kapitest's default) lists what it holds, so
// the full ranges' scans see every address and no collision counts.

// allocatorSeries returns the samples of the kube_apiserver_<kind>_allocator_
// families (counts of histograms as _count), by "name{labels}".
func allocatorSeries(t *testing.T, cfg *rest.Config) map[string]float64 {
	t.Helper()
	body, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, mf := range families {
		if !strings.HasPrefix(name, "kube_apiserver_clusterip_allocator_") && !strings.HasPrefix(name, "kube_apiserver_nodeport_allocator_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[strings.Replace(key, "{", "_count{", 1)] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func checkAllocatorSeries(t *testing.T, cfg *rest.Config, step string, want map[string]float64) {
	t.Helper()
	if got := allocatorSeries(t, cfg); !maps.Equal(got, want) {
		t.Errorf("%s:\ngot  %v\nwant %v", step, got, want)
	}
}

func TestClusterIPAllocatorMetrics(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--service-cluster-ip-range=10.0.0.0/29"))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	svcs := cs.CoreV1().Services("default")
	const (
		allocated = `kube_apiserver_clusterip_allocator_allocated_ips{cidr="10.0.0.0/29"}`
		available = `kube_apiserver_clusterip_allocator_available_ips{cidr="10.0.0.0/29"}`
		static    = `kube_apiserver_clusterip_allocator_allocation_total{cidr="10.0.0.0/29",scope="static"}`
		dynamic   = `kube_apiserver_clusterip_allocator_allocation_total{cidr="10.0.0.0/29",scope="dynamic"}`
		staticErr = `kube_apiserver_clusterip_allocator_allocation_errors_total{cidr="10.0.0.0/29",scope="static"}`
		dynErr    = `kube_apiserver_clusterip_allocator_allocation_errors_total{cidr="10.0.0.0/29",scope="dynamic"}`
		duration  = `kube_apiserver_clusterip_allocator_allocation_duration_seconds_count{cidr="10.0.0.0/29"}`
		ports     = `kube_apiserver_nodeport_allocator_allocated_ports{}`
		portsFree = `kube_apiserver_nodeport_allocator_available_ports{}`
	)
	// At start the "kubernetes" Service took 10.0.0.1 (static, as the
	// reference's first /metrics shows); the NodePort gauges are 0.
	want := map[string]float64{allocated: 1, available: 5, static: 1, duration: 1, ports: 0, portsFree: 0}
	checkAllocatorSeries(t, srv.Config, "start", want)

	if _, err := svcs.Create(ctx, ipSvc("s1", "10.0.0.2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want[static], want[duration], want[allocated], want[available] = 2, 2, 2, 4
	checkAllocatorSeries(t, srv.Config, "static allocation", want)

	// A taken address: the IPAddress write fails, a static error.
	if _, err := svcs.Create(ctx, ipSvc("taken", "10.0.0.2"), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("taken address: got %v, want 422", err)
	}
	want[staticErr] = 1
	// An address in no ServiceCIDR, and dry runs: nothing counts.
	if _, err := svcs.Create(ctx, ipSvc("out", "10.0.1.2"), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("address out of range: got %v, want 422", err)
	}
	for _, ip := range []string{"", "10.0.0.3"} {
		if _, err := svcs.Create(ctx, ipSvc("dry", ip), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry run %q: %v", ip, err)
		}
	}
	checkAllocatorSeries(t, srv.Config, "errors and dry runs", want)

	// Exhaust the range: 10.0.0.3 to 10.0.0.6, then one more.
	for i := range 4 {
		if _, err := svcs.Create(ctx, ipSvc(fmt.Sprintf("d%d", i), ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want[dynamic], want[duration], want[allocated], want[available] = 4, 6, 6, 0
	checkAllocatorSeries(t, srv.Config, "range exhausted", want)
	if _, err := svcs.Create(ctx, ipSvc("full", ""), metav1.CreateOptions{}); !apierrors.IsInternalError(err) {
		t.Fatalf("full range: got %v, want 500", err)
	}
	want[dynErr] = 1
	checkAllocatorSeries(t, srv.Config, "full", want)

	// A release sets the gauges; the counters stay.
	if err := svcs.Delete(ctx, "s1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want[allocated], want[available] = 5, 1
	checkAllocatorSeries(t, srv.Config, "release", want)
}

func TestNodePortAllocatorMetrics(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--service-node-port-range=30000-30002"))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	svcs := cs.CoreV1().Services("default")
	nodePort := func(name string, port int32) *corev1.Service {
		s := ipSvc(name, "")
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = port
		return s
	}
	const (
		allocated = `kube_apiserver_nodeport_allocator_allocated_ports{}`
		available = `kube_apiserver_nodeport_allocator_available_ports{}`
		static    = `kube_apiserver_nodeport_allocator_allocation_total{scope="static"}`
		dynamic   = `kube_apiserver_nodeport_allocator_allocation_total{scope="dynamic"}`
		staticErr = `kube_apiserver_nodeport_allocator_allocation_errors_total{scope="static"}`
		dynErr    = `kube_apiserver_nodeport_allocator_allocation_errors_total{scope="dynamic"}`
		// Every Service below takes (or, when it fails, takes and gives
		// back) a dynamic ClusterIP of the default 10.0.0.0/24 first.
		ips       = `kube_apiserver_clusterip_allocator_allocated_ips{cidr="10.0.0.0/24"}`
		ipsFree   = `kube_apiserver_clusterip_allocator_available_ips{cidr="10.0.0.0/24"}`
		ipStatic  = `kube_apiserver_clusterip_allocator_allocation_total{cidr="10.0.0.0/24",scope="static"}`
		ipDynamic = `kube_apiserver_clusterip_allocator_allocation_total{cidr="10.0.0.0/24",scope="dynamic"}`
		ipTime    = `kube_apiserver_clusterip_allocator_allocation_duration_seconds_count{cidr="10.0.0.0/24"}`
	)
	want := map[string]float64{allocated: 0, available: 0, ips: 1, ipsFree: 253, ipStatic: 1, ipTime: 1}
	checkAllocatorSeries(t, srv.Config, "start", want)

	if _, err := svcs.Create(ctx, nodePort("np1", 30000), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want[static], want[allocated], want[available] = 1, 1, 2
	want[ipDynamic], want[ipTime], want[ips], want[ipsFree] = 1, 2, 2, 252
	checkAllocatorSeries(t, srv.Config, "static allocation", want)

	// A taken port and one out of the range: static errors (each
	// Service's ClusterIP taken and given back).
	for _, port := range []int32{30000, 30100} {
		if _, err := svcs.Create(ctx, nodePort("bad", port), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Fatalf("node port %d: got %v, want 422", port, err)
		}
	}
	want[staticErr], want[ipDynamic], want[ipTime] = 2, 3, 4
	// Dry runs count nothing.
	for _, port := range []int32{0, 30001} {
		if _, err := svcs.Create(ctx, nodePort("dry", port), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry run %d: %v", port, err)
		}
	}
	checkAllocatorSeries(t, srv.Config, "errors and dry runs", want)

	// Exhaust the range, then one more.
	for _, name := range []string{"np2", "np3"} {
		if _, err := svcs.Create(ctx, nodePort(name, 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want[dynamic], want[allocated], want[available] = 2, 3, 0
	want[ipDynamic], want[ipTime], want[ips], want[ipsFree] = 5, 6, 4, 250
	checkAllocatorSeries(t, srv.Config, "range exhausted", want)
	if _, err := svcs.Create(ctx, nodePort("full", 0), metav1.CreateOptions{}); !apierrors.IsInternalError(err) {
		t.Fatalf("full range: got %v, want 500", err)
	}
	want[dynErr], want[ipDynamic], want[ipTime] = 1, 6, 7
	checkAllocatorSeries(t, srv.Config, "full", want)

	// Releases: a deleted Service, and one that stops being a NodePort.
	if err := svcs.Delete(ctx, "np1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want[allocated], want[available], want[ips], want[ipsFree] = 2, 1, 3, 251
	checkAllocatorSeries(t, srv.Config, "delete", want)
	np2, err := svcs.Get(ctx, "np2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	np2.Spec.Type = corev1.ServiceTypeClusterIP
	np2.Spec.Ports[0].NodePort = 0
	if _, err := svcs.Update(ctx, np2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want[allocated], want[available] = 1, 2
	checkAllocatorSeries(t, srv.Config, "no longer a NodePort", want)
}
