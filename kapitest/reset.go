package kapitest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

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
// directly, one change at a time, so that watchers see every change.
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
// The start state (system namespaces, bootstrap objects, the CRDs of
// WithCRDs) is kept as it is now: changes the server made to it since
// (leases renewed, status written) stay.
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
		cur, err := s.storage.read(ctx)
		if err != nil {
			return fmt.Errorf("kapitest reset: %w", err)
		}
		if len(extraKeys(cur, s.baseline)) == 0 {
			return nil
		}
	}
	return nil
}

func extraKeys(cur, want map[string][]byte) []string {
	var out []string
	for k := range cur {
		if _, ok := want[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// restore deletes every key not in want and puts back the keys of want
// that are missing, and with overwrite those whose content differs.
func (s *Server) restore(want map[string][]byte, overwrite bool) error {
	ctx := context.Background()
	cur, err := s.storage.read(ctx)
	if err != nil {
		return err
	}
	deletes := namespacesFirst(extraKeys(cur, want), namespacePrefix(s.storage))
	puts := map[string][]byte{}
	for k, v := range want {
		c, ok := cur[k]
		if !ok || (overwrite && !bytes.Equal(c, v)) {
			puts[k] = v
		}
	}
	if len(deletes) == 0 && len(puts) == 0 {
		return nil
	}
	return s.storage.apply(ctx, puts, deletes)
}

// namespacesFirst sorts keys with the namespaces (keys under nsPrefix)
// first. Deleted first, a namespace is gone before its objects are: a
// controller that sees one of them deleted (the default ServiceAccount)
// and makes it again is refused by namespace admission rather than
// leaving an object behind.
func namespacesFirst(keys []string, nsPrefix string) []string {
	slices.SortFunc(keys, func(a, b string) int {
		an, bn := strings.HasPrefix(a, nsPrefix), strings.HasPrefix(b, nsPrefix)
		switch {
		case an && !bn:
			return -1
		case bn && !an:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// kvStore is the server's storage seen as keys and values.
type kvStore interface {
	read(ctx context.Context) (map[string][]byte, error)
	// apply deletes deletes in their order, then writes puts.
	apply(ctx context.Context, puts map[string][]byte, deletes []string) error
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

func (m memoryKV) apply(_ context.Context, puts map[string][]byte, deletes []string) error {
	_, err := m.b.Apply(puts, deletes)
	return err
}

// etcdKV is the server's etcd (embedded or external) under its prefix.
type etcdKV struct {
	client *clientv3.Client
	prefix string
}

func (e etcdKV) root() string { return strings.TrimSuffix(e.prefix, "/") }

func (e etcdKV) read(ctx context.Context) (map[string][]byte, error) {
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

// etcdWriters is how many writes etcdKV.apply has in flight: etcd
// commits concurrent proposals together (one fsync for many), so more in
// flight is faster until the server's cores are busy.
const etcdWriters = 64

// apply makes one etcd write per change, so that every change has a
// revision of its own as the API's writes do (kapi's watch cache takes one
// event per revision, and an etcd transaction's changes share one),
// several at a time: first the deletes of namespaces, then the other
// deletes and the puts.
func (e etcdKV) apply(ctx context.Context, puts map[string][]byte, deletes []string) error {
	var first, rest []clientv3.Op
	for _, k := range deletes {
		if strings.HasPrefix(k, namespacePrefix(e)) {
			first = append(first, clientv3.OpDelete(k))
		} else {
			rest = append(rest, clientv3.OpDelete(k))
		}
	}
	for _, k := range sortedKeys(puts) {
		rest = append(rest, clientv3.OpPut(k, string(puts[k])))
	}
	if err := e.do(ctx, first); err != nil {
		return err
	}
	return e.do(ctx, rest)
}

// do runs ops, etcdWriters at a time, and returns the first error.
func (e etcdKV) do(ctx context.Context, ops []clientv3.Op) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan clientv3.Op)
	)
	for range min(etcdWriters, len(ops)) {
		wg.Go(func() {
			for op := range next {
				if _, err := e.client.Do(ctx, op); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, op := range ops {
		next <- op
	}
	close(next)
	wg.Wait()
	return first
}

func sortedKeys(m map[string][]byte) []string {
	return slices.Sorted(maps.Keys(m))
}
