package embedded

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
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

// TestSingleMemberSnapshotsOften: a single member snapshots every
// singleMemberSnapshotCount entries (etcd's default is 10,000), so a
// restart replays at most that many WAL entries; the data is the same
// after a restart.
func TestSingleMemberSnapshotsOften(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	s := start(t, dir, true)
	n := singleMemberSnapshotCount + 200
	for i := range n {
		if _, err := s.Client().Put(t.Context(), fmt.Sprintf("/k/%d", i), "v"); err != nil {
			s.Close()
			t.Fatal(err)
		}
	}
	s.Close()
	snaps, err := filepath.Glob(filepath.Join(dir, "member", "snap", "*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 {
		t.Fatalf("no snapshot file after %d writes", n)
	}
	s = start(t, dir, true)
	defer s.Close()
	got, err := s.Client().Get(t.Context(), "/k/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != int64(n) {
		t.Fatalf("after the restart %d keys, want %d", got.Count, n)
	}
}
