package embedded

import (
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// TestRaftNodeOfFindsNode: the raft node is found in the etcd server (an
// etcd upgrade that renames the fields fails here, not silently at
// start).
func TestRaftNodeOfFindsNode(t *testing.T) {
	s := start(t, filepath.Join(t.TempDir(), "etcd"), true)
	defer s.Close()
	node, ok := raftNodeOf(s.etcd.Server)
	if !ok {
		t.Fatal("raft node of the etcd server not found")
	}
	if st := node.Status(); st.ID != uint64(s.etcd.Server.MemberID()) {
		t.Fatalf("raft node's ID %x, want the member's %x", st.ID, uint64(s.etcd.Server.MemberID()))
	}
	if _, ok := raftNodeOf(nil); ok {
		t.Fatal("raftNodeOf(nil) found a node")
	}
}

// TestLoneMemberLeadsAtOnce: a single member campaigns as soon as it can
// rather than after its election clock. The clock is made slow (10 s
// ticks: the fast-forwarded clock campaigns 10 to 50 s after the start),
// and Start, on a new data dir, then on the same one with data, with
// fsync, must be ready long before the clock's first possible election.
func TestLoneMemberLeadsAtOnce(t *testing.T) {
	tuneEtcdConfig = func(ec *embed.Config) { ec.TickMs, ec.ElectionMs = 10_000, 50_000 }
	defer func() { tuneEtcdConfig = nil }()
	dir := filepath.Join(t.TempDir(), "etcd")
	for i, name := range []string{"new data dir", "restart"} {
		s, err := Start(t.Context(), Config{DataDir: dir, Logger: quietLogger(), StartTimeout: 8 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: ready in %s", name, s.ReadyIn())
		if _, err := s.Client().Put(t.Context(), "/k", name); err != nil {
			s.Close()
			t.Fatalf("%s: put: %v", name, err)
		}
		if i == 1 {
			got, err := s.Client().Get(t.Context(), "/k")
			if err != nil || len(got.Kvs) != 1 {
				s.Close()
				t.Fatalf("%s: get: %v %v", name, got, err)
			}
		}
		s.Close()
	}
}
