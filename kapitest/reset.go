package kapitest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// Snapshot is the whole stored state of a server at one moment.
type Snapshot struct {
	data map[string][]byte
}

// Len is the number of stored objects in the snapshot.
func (s *Snapshot) Len() int { return len(s.data) }

// Keys are the storage keys of the snapshot's objects, sorted
// ("/registry/<resource>/<namespace>/<name>").
func (s *Snapshot) Keys() []string { return sortedKeys(s.data) }

// Snapshot records the server's stored state (every object of every
// resource, built-in and custom), for Restore.
func (s *Server) Snapshot() (*Snapshot, error) {
	data, err := s.storage.read(context.Background())
	if err != nil {
		return nil, fmt.Errorf("kapitest snapshot: %w", err)
	}
	return &Snapshot{data: data}, nil
}

// Restore makes the stored state what it was at snap: objects created
// since are deleted, objects changed or deleted since get their snapshot
// content back (with a new resourceVersion). Like Reset it writes storage
// directly (on etcd, many changes per transaction); watchers see every
// change.
func (s *Server) Restore(snap *Snapshot) error {
	if err := s.restore(snap.data, true); err != nil {
		return fmt.Errorf("kapitest restore: %w", err)
	}
	return nil
}

// Reset empties the server of what the test stored: every object that was
// not there when Start returned is deleted (namespaces, their contents,
// CRDs created by the test with their custom resources, cluster-scoped
// objects), and objects of the start state that were deleted come back.
// The start state (system namespaces, bootstrap objects, the server's
// identity Lease and legacy token tracking ConfigMap in kube-system, the
// CRDs of WithCRDs) is kept as it is now: changes the server made to it
// since (leases renewed, status written) stay.
//
// Reset works on storage directly instead of one DELETE per object: no
// admission, finalizers or graceful deletion, so a namespace goes at once
// with its contents. Every deletion is an ordinary storage change, so
// watch caches, informers and watching clients see a DELETED event for
// each object, as if it had been deleted through the API. Reset returns
// when storage holds no object of the test's; clients see the deletions
// as soon as their watches deliver them (consistent reads at once).
func (s *Server) Reset() error {
	// Controllers may be writing objects of the test's while Reset runs
	// (a default ServiceAccount or the root CA ConfigMap of a namespace
	// being removed): such a write was admitted while the namespace
	// existed and lands after the deletion. Once every request in flight
	// at the deletion has finished, a second pass removes what landed;
	// later writes into a removed namespace are refused by
	// NamespaceLifecycle, which reads storage. A few passes cover a
	// controller reacting to the deletions themselves.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 5 {
		if err := s.restore(s.baseline, false); err != nil {
			return fmt.Errorf("kapitest reset: %w", err)
		}
		if err := s.inFlight(ctx); err != nil {
			return fmt.Errorf("kapitest reset: waiting for the requests in flight: %w", err)
		}
		cur, err := s.storage.keys(ctx)
		if err != nil {
			return fmt.Errorf("kapitest reset: %w", err)
		}
		if !hasExtraKey(s.withoutServerOwned(cur), s.baseline) {
			return nil
		}
	}
	return nil
}

// extraKeys returns the keys of cur (sorted) that are not in want, in
// cur's order.
func extraKeys(cur []string, want map[string][]byte) []string {
	var out []string
	for _, k := range cur {
		if _, ok := want[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// hasExtraKey reports whether a key of cur is not in want.
func hasExtraKey(cur []string, want map[string][]byte) bool {
	for _, k := range cur {
		if _, ok := want[k]; !ok {
			return true
		}
	}
	return false
}

// restore deletes every key not in want and puts back the keys of want
// that are missing, and with overwrite those whose content differs.
func (s *Server) restore(want map[string][]byte, overwrite bool) error {
	ctx := context.Background()
	var cur []string // sorted
	var vals map[string][]byte
	var err error
	if overwrite {
		if vals, err = s.storage.read(ctx); err != nil {
			return err
		}
		cur = sortedKeys(vals)
	} else if cur, err = s.storage.keys(ctx); err != nil { // Reset compares keys only
		return err
	}
	// The server's own keys are neither deleted nor put back; their
	// directories are never deleted whole.
	allCur, dirWant := cur, want
	if len(s.serverOwnedKeys) > 0 {
		dirWant = maps.Clone(want)
		for _, k := range s.serverOwnedKeys {
			dirWant[k] = nil
		}
	}
	cur = s.withoutServerOwned(cur)
	want = s.wantedWithoutServerOwned(want)
	extra := extraKeys(cur, want)
	deletes := namespacesFirst(extra, namespacePrefix(s.storage))
	puts := map[string][]byte{}
	switch {
	case overwrite:
		for k, v := range want {
			if c, ok := vals[k]; !ok || !bytes.Equal(c, v) {
				puts[k] = v
			}
		}
	case len(cur)-len(extra) < len(want):
		// Some wanted key is missing (cur's other keys are all wanted).
		for k, v := range want {
			if _, ok := slices.BinarySearch(cur, k); !ok {
				puts[k] = v
			}
		}
	}
	if len(deletes) == 0 && len(puts) == 0 {
		return nil
	}
	return s.storage.apply(ctx, change{puts: puts, deletes: deletes, dirs: wholeDirs(allCur, dirWant, deletes)})
}

// change is what restore writes: deletes first (in their order), then
// puts. dirs are directories of keys (without their trailing "/") whose
// every key goes: every key now directly in them is in deletes, and no key
// of the wanted state is under them, so a store may delete each with one
// ranged delete instead of key by key (a key written there since was not
// wanted either).
type change struct {
	puts    map[string][]byte
	deletes []string
	dirs    []string
}

// wholeDirs returns, sorted, the directories of deleted keys that go
// whole (see change.dirs), leaving out those under another one.
func wholeDirs(cur []string, want map[string][]byte, deletes []string) []string {
	total := map[string]int{}
	for _, k := range cur {
		total[parentDir(k)]++
	}
	gone := map[string]int{}
	for _, k := range deletes {
		gone[parentDir(k)]++
	}
	wanted := map[string]bool{} // every ancestor directory of a wanted key
	for k := range want {
		for d := parentDir(k); d != "" && !wanted[d]; d = parentDir(d) {
			wanted[d] = true
		}
	}
	var dirs []string
	for d, n := range gone {
		if d != "" && n == total[d] && !wanted[d] {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	// A directory under another listed one is deleted with it.
	return slices.DeleteFunc(dirs, func(d string) bool {
		for a := parentDir(d); a != ""; a = parentDir(a) {
			if _, ok := slices.BinarySearch(dirs, a); ok {
				return true
			}
		}
		return false
	})
}

// parentDir is key up to its last "/" ("" for a key without one).
func parentDir(key string) string {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return ""
	}
	return key[:i]
}

// namespacesFirst sorts keys with the namespaces (keys under nsPrefix)
// first. Deleted first, a namespace is gone before its objects are: a
// controller that sees one of them deleted (the default ServiceAccount)
// and makes it again is refused by namespace admission rather than
// leaving an object behind. Keys already sorted (as read) are only
// partitioned, in order.
func namespacesFirst(keys []string, nsPrefix string) []string {
	if !slices.IsSorted(keys) {
		slices.Sort(keys)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if strings.HasPrefix(k, nsPrefix) {
			out = append(out, k)
		}
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, nsPrefix) {
			out = append(out, k)
		}
	}
	return out
}

// kvStore is the server's storage seen as keys and values.
type kvStore interface {
	read(ctx context.Context) (map[string][]byte, error)
	// keys is read's keys, sorted.
	keys(ctx context.Context) ([]string, error)
	// apply deletes ch.deletes in their order (ch.dirs may be deleted
	// whole instead), then writes ch.puts.
	apply(ctx context.Context, ch change) error
	// root is the prefix of every key ("/registry"; "" on the memory
	// backend): a Namespace's key is root+"/namespaces/"+name.
	root() string
}

// namespacePrefix is the key prefix of Namespaces in kv.
func namespacePrefix(kv kvStore) string { return kv.root() + "/namespaces/" }

type memoryKV struct{ b *memory.Backend }

func (memoryKV) root() string { return "" }

func (m memoryKV) read(context.Context) (map[string][]byte, error) {
	data, _, err := m.b.Read("")
	return data, err
}

// readChanges is read with a channel closed at storage's next write.
func (m memoryKV) readChanges() (map[string][]byte, <-chan struct{}, error) {
	data, rev, err := m.b.Read("")
	return data, m.b.Changed(rev), err
}

func (m memoryKV) keys(context.Context) ([]string, error) {
	keys, _, err := m.b.Keys("")
	return keys, err
}

func (m memoryKV) apply(_ context.Context, ch change) error {
	_, err := m.b.Apply(ch.puts, ch.deletes)
	return err
}

// etcdKV is the server's etcd (embedded or external) under its prefix.
type etcdKV struct {
	client *clientv3.Client
	prefix string
}

func (e etcdKV) root() string { return strings.TrimSuffix(e.prefix, "/") }

func (e etcdKV) read(ctx context.Context) (map[string][]byte, error) {
	return e.get(ctx)
}

func (e etcdKV) keys(ctx context.Context) ([]string, error) {
	prefix := strings.TrimSuffix(e.prefix, "/") + "/"
	resp, err := e.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	out := make([]string, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		out[i] = string(kv.Key)
	}
	if !slices.IsSorted(out) { // etcd returns a range in key order
		slices.Sort(out)
	}
	return out, nil
}

func (e etcdKV) get(ctx context.Context) (map[string][]byte, error) {
	prefix := strings.TrimSuffix(e.prefix, "/") + "/"
	resp, err := e.client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = kv.Value
	}
	return out, nil
}

// etcdTxnOps is the most operations etcdKV.apply puts in one transaction:
// etcd's default --max-txn-ops (the embedded etcd keeps it). A server with
// a lower limit refuses the transaction; apply then makes those changes
// one request each.
const etcdTxnOps = 128

// etcdTxnBytes bounds the values one transaction of apply writes, well
// under etcd's default --max-request-bytes (1.5 MiB).
const etcdTxnBytes = 1 << 20

// etcdTxnsInFlight is how many transactions apply has in flight: etcd
// commits concurrent proposals together (one fsync for several).
const etcdTxnsInFlight = 8

// apply makes the changes in as few transactions as it can: a ranged
// delete per whole directory (a namespace's objects of one resource), the
// other deletes key by key, then the puts, at most etcdTxnOps operations
// and etcdTxnBytes of values per transaction. The first transaction (with
// the namespaces' deletes, first in ch.deletes) commits before the others
// start, so a namespace is never gone after its objects. The changes of
// one transaction share a revision; kapi's watch cache delivers each of
// them (a DELETED event per object, in the transaction's order), as it
// does any etcd transaction's. Typically the whole Reset is one
// transaction.
func (e etcdKV) apply(ctx context.Context, ch change) error {
	var ops []clientv3.Op
	inDir := func(k string) bool { // under one of ch.dirs
		for d := parentDir(k); d != ""; d = parentDir(d) {
			if _, ok := slices.BinarySearch(ch.dirs, d); ok {
				return true
			}
		}
		return false
	}
	nsPrefix := namespacePrefix(e)
	for _, k := range ch.deletes {
		if strings.HasPrefix(k, nsPrefix) && !inDir(k) {
			ops = append(ops, clientv3.OpDelete(k))
		}
	}
	for _, d := range ch.dirs {
		ops = append(ops, clientv3.OpDelete(d+"/", clientv3.WithPrefix()))
	}
	for _, k := range ch.deletes {
		if !strings.HasPrefix(k, nsPrefix) && !inDir(k) {
			ops = append(ops, clientv3.OpDelete(k))
		}
	}
	for _, k := range sortedKeys(ch.puts) {
		ops = append(ops, clientv3.OpPut(k, string(ch.puts[k])))
	}
	batches := txnBatches(ops)
	if len(batches) == 0 {
		return nil
	}
	if err := e.txn(ctx, batches[0]); err != nil {
		return err
	}
	return e.do(ctx, batches[1:])
}

// txnBatches splits ops into transactions of at most etcdTxnOps
// operations and etcdTxnBytes of values.
func txnBatches(ops []clientv3.Op) [][]clientv3.Op {
	var batches [][]clientv3.Op
	size := 0
	for _, op := range ops {
		n := len(op.ValueBytes())
		if k := len(batches); k == 0 || len(batches[k-1]) == etcdTxnOps || (size+n > etcdTxnBytes && len(batches[k-1]) > 0) {
			batches = append(batches, nil)
			size = 0
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], op)
		size += n
	}
	return batches
}

// do commits batches, etcdTxnsInFlight at a time, and returns the first
// error.
func (e etcdKV) do(ctx context.Context, batches [][]clientv3.Op) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan []clientv3.Op)
	)
	for range min(etcdTxnsInFlight, len(batches)) {
		wg.Go(func() {
			for batch := range next {
				if err := e.txn(ctx, batch); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, b := range batches {
		next <- b
	}
	close(next)
	wg.Wait()
	return first
}

// txn commits ops in one transaction, or one by one if the server allows
// fewer operations per transaction.
func (e etcdKV) txn(ctx context.Context, ops []clientv3.Op) error {
	_, err := e.client.Txn(ctx).Then(ops...).Commit()
	if !errors.Is(err, rpctypes.ErrTooManyOps) {
		return err
	}
	for _, op := range ops {
		if _, err := e.client.Do(ctx, op); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	return slices.Sorted(maps.Keys(m))
}

// withoutServerOwned returns the keys of cur (sorted) but the server's own
// (serverOwnedKeys), which Reset and Restore leave alone.
func (s *Server) withoutServerOwned(cur []string) []string {
	if len(s.serverOwnedKeys) == 0 {
		return cur
	}
	return slices.DeleteFunc(slices.Clone(cur), func(k string) bool { return slices.Contains(s.serverOwnedKeys, k) })
}

// wantedWithoutServerOwned returns want without the server's own keys
// (a state read after the server made them holds them).
func (s *Server) wantedWithoutServerOwned(want map[string][]byte) map[string][]byte {
	has := false
	for _, k := range s.serverOwnedKeys {
		if _, ok := want[k]; ok {
			has = true
		}
	}
	if !has {
		return want
	}
	out := make(map[string][]byte, len(want))
	for k, v := range want {
		if !slices.Contains(s.serverOwnedKeys, k) {
			out[k] = v
		}
	}
	return out
}
