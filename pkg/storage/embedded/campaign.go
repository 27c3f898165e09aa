package embedded

import (
	"context"
	"reflect"
	"time"
	"unsafe"

	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/raft/v3"
)

// A single member waits for its election clock before it leads: etcd
// fast-forwards a one-member cluster's clock to one tick short of the
// election timeout (EtcdServer.adjustTicks), and raft then waits out its
// randomized timeout (ElectionMs to 2×ElectionMs), so the member
// campaigned 10–50 ms after etcd's start with a 10 ms tick and a 50 ms
// election timeout: a third of an embedded etcd's start, waited out on
// every start (measured: median 33 ms of 48 ms from the data check to
// ready, 15 restarts).
//
// campaignNow makes the member campaign at once instead, with raft's own
// Campaign (the MsgHup a tick past the timeout would send). Leadership
// itself does not change meaning: the member is the only voter, so it
// alone decides the election whenever it is held, and what a leader does
// first (its empty entry, etcd's publication of its attributes, both
// fsynced before etcd reports ready) is unchanged. raft refuses to
// campaign while committed configuration changes are not applied yet
// (the membership entries a young data dir's WAL replays on start); the
// campaign is therefore sent once raft reports everything committed as
// applied, and until then, or if the campaign is refused, lost or the
// raft node cannot be reached, the ticks elect the member as before.
// Clustered members never do this: they keep etcd's election among
// peers.
//
// It returns when the member leads, when ctx ends, or after limit.
func campaignNow(ctx context.Context, s *etcdserver.EtcdServer, limit time.Duration) {
	node, ok := raftNodeOf(s)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// raft applies (and reports applied) the replayed entries within a
	// few rounds of its loop after the start: a short poll. A lone voter's
	// campaign ends in leadership within the step that runs it; should
	// one be refused all the same, it is sent again after resend.
	const poll, resend = 250 * time.Microsecond, 5 * time.Millisecond
	var last time.Time
	for {
		st := node.Status()
		if st.RaftState == raft.StateLeader {
			return
		}
		// Applied below Commit: raft would refuse (configuration
		// changes may be pending).
		if st.Applied >= st.GetCommit() && time.Since(last) >= resend {
			if err := node.Campaign(ctx); err != nil {
				return // stopped or out of time: the ticks decide
			}
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-s.StopNotify():
			return
		case <-time.After(poll):
		}
	}
}

// raftNodeOf returns the raft node of an etcd server. etcd exposes no
// accessor: the node is read from the server's raftNode (field r, whose
// embedded raftNodeConfig embeds raft.Node) by name and type, read-only;
// it is set when the server is built and never replaced. If a version of
// etcd renames or retypes the fields, ok is false (and
// TestRaftNodeOfFindsNode fails).
func raftNodeOf(s *etcdserver.EtcdServer) (raft.Node, bool) {
	if s == nil {
		return nil, false
	}
	r := reflect.ValueOf(s).Elem().FieldByName("r")
	if !r.IsValid() || r.Kind() != reflect.Struct {
		return nil, false
	}
	f := r.FieldByName("Node")
	if !f.IsValid() || f.Type() != reflect.TypeFor[raft.Node]() || !f.CanAddr() {
		return nil, false
	}
	node, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(raft.Node)
	return node, node != nil
}
