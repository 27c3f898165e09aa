package kapitest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// wholeDirs lists a directory for a ranged delete only when every key in
// it goes and no wanted key is under it, and leaves out directories under
// a listed one.
func TestWholeDirs(t *testing.T) {
	set := func(keys ...string) map[string][]byte {
		m := map[string][]byte{}
		for _, k := range keys {
			m[k] = nil
		}
		return m
	}
	want := set(
		"/registry/namespaces/default",
		"/registry/configmaps/default/kube-root-ca.crt",
		"/registry/services/specs/default/kubernetes",
		"/registry/leases/kube-system/wanted", // missing now: put back
	)
	extra := []string{
		"/registry/namespaces/team",                       // namespaces: a wanted key is there
		"/registry/configmaps/team/a",                     // whole
		"/registry/configmaps/team/b",                     // whole
		"/registry/configmaps/default/c",                  // default's has kube-root-ca.crt
		"/registry/minions/node-1",                        // whole (no node wanted)
		"/registry/things.example.com/things/team/t1",     // whole
		"/registry/things.example.com/things/other/t2",    // whole
		"/registry/x/a",                                   // whole
		"/registry/x/y/b",                                 // whole, under a whole one
		"/registry/services/specs/team/s",                 // whole
		"/registry/leases/kube-system/tmp",                // a wanted key goes back there
		"/registry/services/endpoints/default/kubernetes", // not deleted: stays
	}
	cur := set(append(slices.Clone(extra), slices.Collect(maps.Keys(want))...)...)
	delete(cur, "/registry/leases/kube-system/wanted")
	deletes := extra[:len(extra)-1]
	got := wholeDirs(slices.Sorted(maps.Keys(cur)), want, deletes)
	wantDirs := []string{
		"/registry/configmaps/team",
		"/registry/minions",
		"/registry/services/specs/team",
		"/registry/things.example.com/things/other",
		"/registry/things.example.com/things/team",
		"/registry/x",
	}
	if !slices.Equal(got, wantDirs) {
		t.Fatalf("wholeDirs:\ngot  %v\nwant %v", got, wantDirs)
	}
	// Each listed directory holds only deleted keys: its ranged delete
	// takes nothing else.
	for _, d := range got {
		for k := range cur {
			if strings.HasPrefix(k, d+"/") && !slices.Contains(deletes, k) {
				t.Errorf("directory %s holds %s, which is not deleted", d, k)
			}
		}
	}
}

// txnBatches keeps transactions within etcd's operation and size limits,
// in order.
func TestTxnBatches(t *testing.T) {
	var ops []clientv3.Op
	for range 300 {
		ops = append(ops, clientv3.OpDelete("k"))
	}
	big := strings.Repeat("x", etcdTxnBytes/2+1)
	ops = append(ops, clientv3.OpPut("a", big), clientv3.OpPut("b", big), clientv3.OpPut("c", "small"))
	batches := txnBatches(ops)
	var sizes []int
	n := 0
	for _, b := range batches {
		sizes = append(sizes, len(b))
		bytes := 0
		for _, op := range b {
			bytes += len(op.ValueBytes())
		}
		if len(b) > etcdTxnOps || (bytes > etcdTxnBytes && len(b) > 1) {
			t.Errorf("batch of %d operations, %d bytes: over the limits", len(b), bytes)
		}
		n += len(b)
	}
	if n != len(ops) || !slices.Equal(sizes, []int{128, 128, 45, 2}) {
		t.Fatalf("batches of sizes %v (%d operations), want [128 128 45 2] (%d)", sizes, n, len(ops))
	}
}

// namespacesFirst puts the namespaces first, each part in key order,
// whether or not the keys come sorted.
func TestNamespacesFirst(t *testing.T) {
	want := []string{"/r/namespaces/a", "/r/namespaces/b", "/r/configmaps/a/x", "/r/configmaps/b/y", "/r/pods/a/p"}
	for _, in := range [][]string{
		{"/r/configmaps/a/x", "/r/configmaps/b/y", "/r/namespaces/a", "/r/namespaces/b", "/r/pods/a/p"},
		{"/r/pods/a/p", "/r/namespaces/b", "/r/configmaps/b/y", "/r/namespaces/a", "/r/configmaps/a/x"},
	} {
		if got := namespacesFirst(slices.Clone(in), "/r/namespaces/"); !slices.Equal(got, want) {
			t.Errorf("namespacesFirst(%v) = %v, want %v", in, got, want)
		}
	}
}
