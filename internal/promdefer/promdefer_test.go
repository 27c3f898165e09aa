package promdefer

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func gathered(t *testing.T, g prometheus.Gatherer) []string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	return names
}

func gauge(name string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name})
}

// The package's init installed a recorder in front of the default
// registry. (The process-wide Flush is tested in cmd/kapi, whose
// imports register the embedded etcd's metrics.)
func TestInstalledAtInit(t *testing.T) {
	if installed == nil || installed.real == nil {
		t.Fatal("no recorder installed at init")
	}
}

func TestRecordThenFlush(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := &recorder{real: reg}
	deferred, dropped, direct := gauge("promdefer_test_deferred"), gauge("promdefer_test_dropped"), gauge("promdefer_test_direct")

	r.MustRegister(deferred, dropped)
	if len(r.pending) != 2 {
		t.Fatalf("pending after MustRegister of two: %d, want 2", len(r.pending))
	}
	if slices.Contains(gathered(t, reg), "promdefer_test_deferred") {
		t.Fatal("a recorded collector is gathered before flush")
	}
	// Register answers from the real registry at once: a second
	// registration of the same collector is refused, as without the
	// recorder.
	if err := r.Register(direct); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(gathered(t, reg), "promdefer_test_direct") {
		t.Fatal("Register did not reach the real registry")
	}
	if err := r.Register(direct); err == nil {
		t.Fatal("registering the same collector twice: no error")
	}
	if !r.Unregister(dropped) {
		t.Fatal("Unregister of a recorded collector: false")
	}
	if len(r.pending) != 1 {
		t.Fatalf("pending after Unregister: %d, want 1", len(r.pending))
	}
	if !r.Unregister(direct) || slices.Contains(gathered(t, reg), "promdefer_test_direct") {
		t.Fatal("Unregister of a registered collector did not reach the real registry")
	}

	r.flush()
	if len(r.pending) != 0 {
		t.Fatalf("pending after flush: %d", len(r.pending))
	}
	names := gathered(t, reg)
	if !slices.Contains(names, "promdefer_test_deferred") || slices.Contains(names, "promdefer_test_dropped") {
		t.Fatalf("after flush the registry gathers %v", names)
	}
	// After flush, MustRegister goes straight through: a duplicate
	// panics as it always did.
	defer func() {
		if recover() == nil {
			t.Error("a duplicate MustRegister after flush did not panic")
		}
	}()
	r.MustRegister(gauge("promdefer_test_deferred"))
}

// A duplicate among the recorded registrations panics at flush, as it
// would have in the init that made it.
func TestDuplicatePanicsAtFlush(t *testing.T) {
	r := &recorder{real: prometheus.NewRegistry()}
	r.MustRegister(gauge("promdefer_test_twice"))
	r.MustRegister(gauge("promdefer_test_twice"))
	defer func() {
		if recover() == nil {
			t.Error("flushing a duplicate did not panic")
		}
	}()
	r.flush()
}
