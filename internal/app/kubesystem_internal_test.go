package app

import (
	"testing"

	"github.com/kapi-dev/kapi/pkg/controlplane/identitylease"
)

// TestIdentityLeaseRunnerStopFirst: once the pre-shutdown hook stopped
// the runner, a start coming late (the server became ready as it began
// to stop) makes no controller, so no Lease is made after the hook ran.
func TestIdentityLeaseRunnerStopFirst(t *testing.T) {
	r := &identityLeaseRunner{}
	r.stop()
	made := false
	if ctrl := r.start(func() *identitylease.Controller { made = true; return nil }); ctrl != nil || made {
		t.Fatalf("start after stop: got %v, made %v; want no controller", ctrl, made)
	}
	r.stop() // idempotent
}
