package etcd3

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultCompactionInterval is the default of --etcd-compaction-interval.
const DefaultCompactionInterval = 5 * time.Minute

// compactRevKey is the key kube-apiservers sharing an etcd coordinate
// compaction through (its Version is the "compaction time").
const compactRevKey = "compact_rev_key"

// StartCompactor starts compacting etcd's history every interval (0:
// DefaultCompactionInterval; negative: never) and returns a function that
// stops it and waits for it to finish.
//
// As kube-apiserver: each tick compacts at the revision observed at the
// previous tick, so at least one interval of history is always kept. Several
// servers sharing one etcd coordinate through compactRevKey with a
// compare-and-swap on its version: in each interval only the first server
// compacts, and if it dies another one takes over.
func StartCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration, logger *slog.Logger) (stop func()) {
	if interval == 0 {
		interval = DefaultCompactionInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if interval > 0 {
		wg.Go(func() { runCompactor(ctx, client, interval, logger) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

func runCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var version, rev int64 // the compaction time we know, the revision to compact at
	for {
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return
		}
		var err error
		version, rev, err = compactTick(ctx, client, version, rev)
		if err != nil && ctx.Err() == nil {
			logger.Warn("etcd compaction failed", "revision", rev, "err", err)
		}
	}
}

// compactTick claims this interval's compaction (if version is still the
// shared compaction time) and compacts at rev. It returns the compaction
// time and the revision to compact at next tick (the current one).
func compactTick(ctx context.Context, client *clientv3.Client, version, rev int64) (int64, int64, error) {
	resp, err := client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))). // increments its Version
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return version, rev, err
	}
	current := resp.Header.Revision
	if !resp.Succeeded {
		// Another server compacted in this interval: adopt its time.
		return resp.Responses[0].GetResponseRange().Kvs[0].Version, current, nil
	}
	version++
	if rev == 0 {
		return version, current, nil // first tick: nothing observed yet
	}
	if err := compact(ctx, client, rev); err != nil {
		return version, current, err
	}
	return version, current, nil
}
