package envtest

import (
	"testing"

	"github.com/kapi-dev/kapi/kapitest"
)

// A controller-runtime manager and reconciler tested with kapitest: the
// CRD comes from the same manifest directory envtest reads.
func TestReconcilerWithKapitest(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithCRDPaths("testdata/crds"))
	runReconcilerScenario(t, srv.Config)
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	// The same server serves the next test from a clean state.
	runReconcilerScenario(t, srv.Config)
}
