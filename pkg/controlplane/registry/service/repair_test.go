package service

import (
	"fmt"
	"maps"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// counters returns the counter samples of reg whose family is in names,
// by "name{labels}".
func counters(t *testing.T, reg *prometheus.Registry, names ...string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	for _, f := range families {
		if !want[f.GetName()] {
			continue
		}
		for _, m := range f.GetMetric() {
			key := f.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
			}
			out[key+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestServiceRepairMetrics: the NodePort repair counts what it finds as
// kubernetes v1.37.2's does (pkg/registry/core/service/portallocator/
// controller/repair.go: "repair" for a Service's port that is not
// allocated, "leak" for an allocation no Service holds once it is
// released, "outOfRange" for a Service's port outside the range, on every
// pass; reconcile_errors_total for failed passes, 0 here; metrics.go:
// names and help), and neither repair counts in the allocators' metrics
// (upstream's repair controllers write around the metered allocators).
func TestServiceRepairMetrics(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	reg := prometheus.NewRegistry()
	m, err := allocator.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvMetrics(t, b, "10.0.0.0/24", 100, m)
	nodePort := func(port int32) func(*corev1.Service) {
		return func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = port
		}
	}
	held := e.create(t, svc("held", nodePort(30010)))
	e.create(t, svc("wide", nodePort(30090)))
	// A leak, and a Service whose port and IP are not allocated.
	if err := e.alloc.Ports.Allocate(t.Context(), 30077, "services/ns/gone", false); err != nil {
		t.Fatal(err)
	}
	if err := e.alloc.Ports.Release(t.Context(), 30010); err != nil {
		t.Fatal(err)
	}
	if err := e.alloc.IPs.Release(t.Context(), netip.MustParseAddr(held.Spec.ClusterIP)); err != nil {
		t.Fatal(err)
	}
	const (
		portErrors = "apiserver_nodeport_repair_port_errors_total"
		reconcile  = "apiserver_nodeport_repair_reconcile_errors_total"
		portAllocs = "kube_apiserver_nodeport_allocator_allocation_total"
		ipAllocs   = "kube_apiserver_clusterip_allocator_allocation_total"
	)
	families := []string{portErrors, reconcile, portAllocs, ipAllocs}
	// The two Services' ports and IPs, and the leaked port: allocations.
	want := map[string]float64{
		reconcile + "{}":                                  0,
		portAllocs + `{scope="static"}`:                   3,
		ipAllocs + `{cidr="10.0.0.0/24",scope="dynamic"}`: 2,
	}
	if got := counters(t, reg, families...); !maps.Equal(got, want) {
		t.Fatalf("before the repair:\ngot  %v\nwant %v", got, want)
	}
	for range 2 { // the second pass finds nothing more
		if _, err := e.main.Repair(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		want[portErrors+`{type="leak"}`] = 1
		want[portErrors+`{type="repair"}`] = 1
		if got := counters(t, reg, families...); !maps.Equal(got, want) {
			t.Errorf("after the repair:\ngot  %v\nwant %v", got, want)
		}
	}
	if !e.portTaken(t, 30010) || e.portTaken(t, 30077) || !e.ipTaken(t, held.Spec.ClusterIP) {
		t.Error("the repair did not restore the held port and IP and release the leak")
	}

	// The same Services seen by a server with a narrower range: wide's
	// port is out of its range, on each pass.
	reg2 := prometheus.NewRegistry()
	m2, err := allocator.NewMetrics(reg2)
	if err != nil {
		t.Fatal(err)
	}
	narrow := newEnvMetrics(t, b, "10.0.0.0/24", 50, m2)
	for pass := 1; pass <= 2; pass++ {
		if _, err := narrow.main.Repair(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		want2 := map[string]float64{reconcile + "{}": 0, portErrors + `{type="outOfRange"}`: float64(pass)}
		if got := counters(t, reg2, families...); !maps.Equal(got, want2) {
			t.Errorf("narrow range, pass %d:\ngot  %v\nwant %v", pass, got, want2)
		}
	}
}
