package controlplane_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/controlplane"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// TestDestroyRightAfterRun destroys the core server as soon as its
// post-start hooks were started: Destroy must wait for them, so that no
// hook starts its controllers and informers on destroyed stores, and no
// destroy function's "did my hook start" check (the webhook and policy
// informers' WaitGroups) races its hook. Under the race detector (as CI
// runs it) the old Destroy failed this test within a few runs with the
// report CI printed for TestInstallWithAuthentication (session 27).
func TestDestroyRightAfterRun(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	b := memory.NewBackend(memory.BackendConfig{})
	defer b.Close()
	cfg := server.NewConfig(logger)
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := completed.New("kube-apiserver", server.NewEmptyDelegate(server.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.New(discovery.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := controlplane.Install(s, controlplane.Config{Storage: generic.MemoryStorage(b), Discovery: disc, MinRequestTimeout: time.Minute, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	if _, _, err := s.PrepareRun().NonBlockingRun(stop, time.Second); err != nil {
		t.Fatal(err)
	}
	close(stop)
	s.Destroy()
}
