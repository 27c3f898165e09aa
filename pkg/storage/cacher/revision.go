package cacher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// revisionReadTimeout bounds one shared read of the underlying store's
// current revision (its waiters give up with their own contexts): a read
// has at least half of it left when it starts, see revisionReads.run.
const revisionReadTimeout = 30 * time.Second

// revisionReads coalesces the reads of the underlying store's current
// revision made by consistent gets (see [Cacher.getConsistent]).
//
// A consistent read may be served from the cache only once the cache has
// reached a revision the store reported AFTER the read arrived: any write
// acknowledged before the read arrived is at or below that revision. So a
// read never joins a revision read already in flight (it may have been
// answered before the read arrived); it joins the next one, which starts
// when the one in flight ends. At most one read is in flight, and every
// request that arrives while it is joins the same next one: under load, a
// burst of gets costs one or two etcd requests, not one each.
//
// The zero value is ready to use.
type revisionReads struct {
	mu      sync.Mutex
	running bool          // a read is in flight
	next    *revisionRead // not started yet: joinable; nil if none
	reads   atomic.Int64  // reads made (for tests and benchmarks)
	timeout time.Duration // of a read; 0: revisionReadTimeout (tests set it)
}

// revisionRead is one read of the current revision, shared by the
// requests that joined it before it started.
type revisionRead struct {
	done    chan struct{} // closed once rev and err are set
	rev     uint64
	at      time.Time // when the read returned
	err     error
	waiters int // requests sharing it (guarded by revisionReads.mu)
}

// current returns a revision of the store read after current was called,
// by read (the store's CurrentRevision), and when the read returned. It
// returns early with ctx's error if ctx ends first.
func (r *revisionReads) current(ctx context.Context, read func(context.Context) (uint64, error)) (uint64, time.Time, error) {
	r.mu.Lock()
	rd := r.next
	if rd == nil {
		rd = &revisionRead{done: make(chan struct{})}
		if r.running {
			r.next = rd // starts when the read in flight ends
		} else {
			r.running = true
			go r.run(rd, read)
		}
	}
	rd.waiters++
	r.mu.Unlock()
	select {
	case <-rd.done:
		return rd.rev, rd.at, rd.err
	case <-ctx.Done():
		return 0, time.Time{}, ctx.Err()
	}
}

// run makes rd's read, then the reads that were queued meanwhile, one at a
// time, until none is left. Each read starts only once nobody can join it
// any more (it is taken off next under mu before it starts). The reads use
// their own context: they are shared, so no single waiter may cancel one.
//
// Back-to-back reads share that context while at least half of
// revisionReadTimeout is left of it (under load the reads follow each other
// without a pause, one per get when the store answers fast): a timer
// context per read was a measurable part of a consistent get's CPU.
func (r *revisionReads) run(rd *revisionRead, read func(context.Context) (uint64, error)) {
	timeout := r.timeout
	if timeout == 0 {
		timeout = revisionReadTimeout
	}
	var (
		ctx     context.Context
		cancel  context.CancelFunc = func() {}
		renewAt time.Time          // ctx serves the reads that start before then
	)
	for now := time.Now(); rd != nil; {
		if ctx == nil || !now.Before(renewAt) {
			cancel()
			ctx, cancel = context.WithTimeout(context.Background(), timeout)
			renewAt = now.Add(timeout / 2)
		}
		rd.rev, rd.err = read(ctx)
		now = time.Now()
		rd.at = now
		r.reads.Add(1)
		close(rd.done)
		r.mu.Lock()
		rd, r.next = r.next, nil
		r.running = rd != nil
		r.mu.Unlock()
	}
	cancel()
}

// getConsistent decides whether a consistent get (resourceVersion "") of
// key may be served from memory: ok once the cache has reached a revision
// of the underlying store read after the get arrived (coalesced with the
// concurrent gets' reads, see revisionReads), at rev. Not ok (the store
// answers) if the cache is not ready, the revision cannot be read, or the
// cache does not catch up within ConsistentReadWait. An error only if ctx
// ends.
//
// Upstream (kube-apiserver v1.37) serves consistent lists from the watch
// cache (ConsistentListFromCache) but sends every consistent get to etcd.
// kapi serves both, with the same guarantee: a get started after a write
// was acknowledged sees that write (or a newer state), because the
// acknowledged write's revision is at most the revision read here.
func (c *Cacher) getConsistent(ctx context.Context, key string) (rev uint64, ok bool, err error) {
	if !c.Ready() {
		// No wait for the initial list (a list would wait ReadyWait):
		// the store answers a get as fast.
		return 0, false, nil
	}
	need, readAt, err := c.revs.current(ctx, c.readRevision)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, fmt.Errorf("get %q: %w", key, err)
		}
		c.cfg.Logger.Debug("current revision read failed, reading through", "key", key, "err", err)
		return 0, false, nil
	}
	if c.progress != nil && c.Revision() < need {
		c.requestProgressSince(ctx, readAt)
	}
	ok, err = c.waitFresh(ctx, need, true)
	if err != nil {
		return 0, false, fmt.Errorf("get %q: %w", key, err)
	}
	return need, ok, nil
}

// requestProgressSince asks the underlying store for a progress
// notification unless one was asked for after since. A cache behind only
// because other resources were written (no event of its own) catches up
// with a revision read at since as soon as a notification asked for after
// that read arrives: one round trip, where the periodic requests of
// waitFresh (at most one per progressRequestInterval/2) may make a get wait
// up to progressRequestInterval. The requests stay bounded: at most one per
// shared revision read.
func (c *Cacher) requestProgressSince(ctx context.Context, since time.Time) {
	c.progressMu.Lock()
	if c.lastProgress.After(since) {
		c.progressMu.Unlock()
		return
	}
	c.lastProgress = time.Now()
	c.progressMu.Unlock()
	if err := c.progress.RequestWatchProgress(ctx); err != nil {
		c.cfg.Logger.Debug("watch cache progress request failed", "prefix", c.cfg.ResourcePrefix, "err", err)
	}
}
