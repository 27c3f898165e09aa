package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/internal/promdefer"
)

// The binary's package initialisation order puts promdefer's init before
// the embedded etcd's: etcd's init-time registrations are recorded, and
// after Flush (main's first step) the default registry serves them, as
// `kapi etcd`'s /metrics needs.
// (Read when this package initialises, after all it imports: -count=N
// runs the test again after its Flush.)
var pendingAtInit = promdefer.Pending()

func TestEtcdRegistrationsDeferredToMain(t *testing.T) {
	if n := pendingAtInit; n < 100 {
		t.Fatalf("%d registrations recorded at init, want the embedded etcd's (~150): promdefer's init ran after etcd's?", n)
	}
	promdefer.Flush()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "etcd_server_has_leader" {
			return
		}
	}
	t.Fatal("etcd_server_has_leader is not gathered from the default registry after Flush")
}
