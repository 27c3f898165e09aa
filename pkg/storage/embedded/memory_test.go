package embedded

import (
	"net/url"
	"sync/atomic"
	"testing"

	"go.etcd.io/etcd/server/v3/etcdserver"
)

// TestRaftLogRetention: a single member keeps only a few applied raft
// entries in memory (it has no follower to catch up); a clustered member
// keeps etcd's default for its peers.
func TestRaftLogRetention(t *testing.T) {
	dir := t.TempDir()
	socks, err := newSockets(dir)
	if err != nil {
		t.Fatal(err)
	}
	single := etcdConfig(Config{DataDir: dir}, dir, socks, DefaultMaxRequestBytes, quietLogger(), new(atomic.Bool), newStartGuard())
	if got := single.SnapshotCatchUpEntries; got != singleMemberCatchUpEntries || got >= etcdserver.DefaultSnapshotCatchUpEntries {
		t.Errorf("single member: SnapshotCatchUpEntries = %d, want %d", got, singleMemberCatchUpEntries)
	}
	if err := single.Validate(); err != nil {
		t.Errorf("single member config does not validate: %v", err)
	}
	peer, _ := url.Parse("https://127.0.0.1:1")
	client, _ := url.Parse("https://127.0.0.1:2")
	clustered := etcdConfig(Config{DataDir: dir, Cluster: &Cluster{Name: "a", PeerURL: *peer, ClientURL: *client, InitialCluster: "a=https://127.0.0.1:1"}},
		dir, socks, DefaultMaxRequestBytes, quietLogger(), new(atomic.Bool), newStartGuard())
	if got := clustered.SnapshotCatchUpEntries; got != etcdserver.DefaultSnapshotCatchUpEntries {
		t.Errorf("clustered member: SnapshotCatchUpEntries = %d, want etcd's default %d", got, etcdserver.DefaultSnapshotCatchUpEntries)
	}
}
