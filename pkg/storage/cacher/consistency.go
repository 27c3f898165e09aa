package cacher

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// The consistency checker, as kube-apiserver v1.37's (k8s.io/apiserver
// storage/cacher/consistency, the DetectCacheInconsistency gate, beta and
// on by default).
//
// Each check lists the cache (its current state and revision) and then the
// underlying store at exactly that revision, in pages of
// consistencyCheckPageSize, and compares a digest of the two lists: FNV-64
// over each object's namespace, "/", name, "/", resourceVersion, in key
// order. Equal digests count status "success", different ones "failure"
// (logged with the first item that differs); a cache not ready, a failed
// list (a compacted revision, etcd unreachable) or a store answering at
// another revision count "error" and change nothing.
//
// A failure marks the cache inconsistent, as upstream's MarkConsistent(false)
// turns off its snapshots: exact lists (match Exact, the legacy paginated
// list at N) and continue tokens go to the underlying store, and no
// snapshot is recorded, until a check succeeds. Consistent lists and
// not-older-than lists are still served from the cache, as upstream's are
// (its delegator asks the snapshots only for exact reads and continue
// tokens). After the success the cache serves exact reads again from the
// first state it reaches after it (upstream's first snapshot is that of the
// next event or relist).

// DefaultConsistencyCheckPeriod is kube-apiserver's CheckPeriod: 5
// minutes, its default etcd compaction interval.
const DefaultConsistencyCheckPeriod = 5 * time.Minute

// consistencyCheckJitter: each wait is between the period and (1 + jitter)
// times it (upstream's wait.Jitter with 0.5).
const consistencyCheckJitter = 0.5

// consistencyCheckPageSize is the page size of the check's store list
// (upstream's checkerListPageSize).
const consistencyCheckPageSize = 10000

// consistencyState is what the checker found (guarded by Cacher.mu).
type consistencyState struct {
	// inconsistent: the last check failed; exact reads and continue
	// tokens go to the underlying store and no snapshot is recorded.
	inconsistent bool
	// floor: after a success that ended an inconsistency, only states
	// that begin after this revision (the cache's at the success) serve
	// exact reads.
	floor uint64
}

// exactServableLocked reports whether a state of the cache that began at
// revision from may serve an exact read (a list at exactly a revision, or
// a continue token).
func (c *Cacher) exactServableLocked(from uint64) bool {
	return !c.consistency.inconsistent && from > c.consistency.floor
}

// exactReadsOff reports whether a failed consistency check has sent exact
// reads and continue tokens to the underlying store.
func (c *Cacher) exactReadsOff() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.consistency.inconsistent
}

// markConsistent records a check's verdict (upstream's MarkConsistent).
func (c *Cacher) markConsistent(consistent bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !consistent {
		c.consistency.inconsistent = true
		c.snaps.reset()
		return
	}
	if c.consistency.inconsistent {
		c.consistency = consistencyState{floor: c.rv}
	}
}

// startConsistencyChecks starts the checker if the config asks for one;
// it ends with ctx (Stop).
func (c *Cacher) startConsistencyChecks(ctx context.Context) {
	period := c.cfg.ConsistencyCheckPeriod
	if period <= 0 {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.cfg.Logger.Debug("Cache consistency check start", "prefix", c.cfg.ResourcePrefix)
		timer := time.NewTimer(jitter(period))
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			c.checkConsistency(ctx)
			timer.Reset(jitter(period))
		}
	}()
}

// jitter returns a duration between d and (1 + consistencyCheckJitter) d.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Float64()*consistencyCheckJitter*float64(d))
}

// checkConsistency runs one check, counts and logs its outcome and marks
// the cache consistent or not; it returns the status counted. The log
// messages are upstream's (passed at debug level, as upstream's at -v=3);
// the resource is the logger's (kapi gives each cache's logger one) and
// the prefix, as in the cacher's other messages.
func (c *Cacher) checkConsistency(ctx context.Context) string {
	d, err := c.digests(ctx)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return "" // stopped meanwhile: nothing to count
		}
		c.cfg.Logger.Error("Cache consistency check error", "prefix", c.cfg.ResourcePrefix, "err", err)
		c.metrics.ConsistencyCheck(storagemetrics.ConsistencyError)
		return storagemetrics.ConsistencyError
	case d.cache == d.store:
		c.cfg.Logger.Debug("Cache consistency check passed", "prefix", c.cfg.ResourcePrefix,
			"resourceVersion", d.rv, "digest", d.cache)
		c.metrics.ConsistencyCheck(storagemetrics.ConsistencySuccess)
		c.markConsistent(true)
		return storagemetrics.ConsistencySuccess
	}
	c.cfg.Logger.Error("Cache consistency check failed", "prefix", c.cfg.ResourcePrefix,
		"resourceVersion", d.rv, "etcdDigest", d.store, "cacheDigest", d.cache, "diffDetail", d.diff.String())
	c.metrics.ConsistencyCheck(storagemetrics.ConsistencyFailure)
	c.markConsistent(false)
	return storagemetrics.ConsistencyFailure
}

// itemID is what the digest covers of one object.
type itemID struct{ namespace, name, rv string }

func (i itemID) String() string { return i.namespace + "/" + i.name + "@" + i.rv }

// digestDiff is the first difference found between the two lists.
type digestDiff struct {
	index        int
	cache, store *itemID // nil: that list has no item at index
}

func (d *digestDiff) String() string {
	if d == nil {
		return "<nil>"
	}
	s := "index " + strconv.Itoa(d.index)
	if d.cache != nil {
		s += ", cache " + d.cache.String()
	}
	if d.store != nil {
		s += ", etcd " + d.store.String()
	}
	return s
}

// checkDigests are one check's findings.
type checkDigests struct {
	rv           string
	cache, store string
	diff         *digestDiff
}

// digester is the digest of one list.
type digester struct {
	h interface {
		Write([]byte) (int, error)
		Sum64() uint64
	}
}

func newDigester() *digester { return &digester{h: fnv.New64()} }

func (d *digester) add(id itemID) {
	for _, s := range []string{id.namespace, "/", id.name, "/", id.rv} {
		_, _ = d.h.Write([]byte(s))
	}
}

func (d *digester) sum() string { return strconv.FormatUint(d.h.Sum64(), 16) }

func idOf(obj runtime.Object) (itemID, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return itemID{}, err
	}
	return itemID{namespace: m.GetNamespace(), name: m.GetName(), rv: m.GetResourceVersion()}, nil
}

// digests lists the cache and then the underlying store at the cache's
// revision and digests both.
func (c *Cacher) digests(ctx context.Context) (checkDigests, error) {
	c.mu.Lock()
	ready := c.ready && !c.stopped
	items, rev := c.objects.snapshot(), c.rv
	c.mu.Unlock()
	if !ready {
		return checkDigests{}, errors.New("cache is not ready")
	}
	// The cache's list (upstream's is a list at resourceVersion "0",
	// counted as one).
	c.metrics.List(len(items), len(items))
	cacheIDs := make([]itemID, len(items))
	cd := newDigester()
	for i, e := range items {
		id, err := idOf(e.object())
		if err != nil {
			return checkDigests{}, fmt.Errorf("failed calculating cache digest: %w", err)
		}
		cacheIDs[i] = id
		cd.add(id)
	}
	rv := strconv.FormatUint(rev, 10)

	sd := newDigester()
	var diff *digestDiff
	n := 0
	opts := storage.ListOptions{
		ResourceVersion:      rv,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		Recursive:            true,
		Predicate:            storage.SelectionPredicate{Limit: consistencyCheckPageSize},
	}
	for {
		list := c.cfg.NewListFunc()
		if err := c.store.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
			return checkDigests{}, fmt.Errorf("failed calculating etcd digest: %w", err)
		}
		err := meta.EachListItem(list, func(obj runtime.Object) error {
			id, err := idOf(obj)
			if err != nil {
				return err
			}
			sd.add(id)
			if diff == nil {
				switch {
				case n >= len(cacheIDs):
					diff = &digestDiff{index: n, store: &id}
				case cacheIDs[n] != id:
					diff = &digestDiff{index: n, cache: &cacheIDs[n], store: &id}
				}
			}
			n++
			return nil
		})
		if err != nil {
			return checkDigests{}, fmt.Errorf("failed calculating etcd digest: %w", err)
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return checkDigests{}, fmt.Errorf("failed calculating etcd digest: %w", err)
		}
		if lm.GetContinue() == "" {
			break
		}
		opts.Predicate.Continue = lm.GetContinue()
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
	if diff == nil && n < len(cacheIDs) {
		diff = &digestDiff{index: n, cache: &cacheIDs[n]}
	}
	return checkDigests{rv: rv, cache: cd.sum(), store: sd.sum(), diff: diff}, nil
}
