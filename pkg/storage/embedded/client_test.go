package embedded

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestInProcessClientRefusesEndedContexts: the single member's own client
// is in-process; as over gRPC, a write or read whose context has already
// been cancelled or has expired fails with the context's error and writes
// nothing. etcd, called directly, would often still commit the write (the
// raft proposal races the context), so the many tries make a missing
// check fail.
func TestInProcessClientRefusesEndedContexts(t *testing.T) {
	s := start(t, filepath.Join(t.TempDir(), "etcd"), true)
	defer s.Close()
	c := s.Client()
	if len(c.Endpoints()) != 0 {
		t.Fatalf("client endpoints %v: want the in-process client (none)", c.Endpoints())
	}
	put, err := c.Put(t.Context(), "/k", "v0")
	if err != nil {
		t.Fatal(err)
	}
	rev := put.Header.Revision

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"cancelled", cancelled, context.Canceled}, {"expired", expired, context.DeadlineExceeded}} {
		for i := range 50 {
			ops := map[string]func() error{
				"put":    func() error { _, err := c.Put(tc.ctx, "/k", "v1"); return err },
				"delete": func() error { _, err := c.Delete(tc.ctx, "/k"); return err },
				"txn":    func() error { _, err := c.Txn(tc.ctx).Then(clientv3.OpPut("/t", "x")).Commit(); return err },
				"get":    func() error { _, err := c.Get(tc.ctx, "/k"); return err },
				"grant":  func() error { _, err := c.Grant(tc.ctx, 60); return err },
			}
			for op, f := range ops {
				if err := f(); !errors.Is(err, tc.want) {
					t.Fatalf("%s %s (try %d): got %v, want %v", tc.name, op, i, err, tc.want)
				}
			}
		}
	}
	got, err := c.Get(t.Context(), "/k")
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Revision != rev || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v0" {
		t.Fatalf("after the refused calls: %v at revision %d, want v0 at %d", got.Kvs, got.Header.Revision, rev)
	}
	leases, err := c.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Leases) != 0 {
		t.Fatalf("leases granted with ended contexts: %v", leases.Leases)
	}
}
