package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdFloor measures what the watch rows of the "on etcd" targets cannot
// go below: etcd's own latency from a write's send to its watch event,
// with no API server in between. It writes as a watch row does (events
// writes, 4 at a time, each value a stamped few hundred bytes, each key
// rewritten from its last revision in a transaction, as an update's
// GuaranteedUpdate does) under a key prefix of its own, with one etcd
// watch of that prefix on its own client, and reports the delay from
// each write's send to its event at the watch (p50/p90/p99 over rounds ×
// events), and the write's own latency (send → the transaction's
// answer, which includes raft and the WAL fsync). The keys are deleted
// afterwards. It is not a row of the table: both servers on that etcd
// pay the same floor.
func etcdFloor(ctx context.Context, endpoint string, rounds, events int) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	wcli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer wcli.Close()
	prefix := fmt.Sprintf("/kapi-bench-floor-%d/", time.Now().UnixNano()%1e9)
	defer func() {
		_, _ = cli.Delete(context.WithoutCancel(ctx), prefix, clientv3.WithPrefix())
	}()
	const objects = 200
	padding := strings.Repeat("x", 600)
	revs := make([]int64, objects)
	var toEvent, toAnswer []time.Duration
	for r := range rounds {
		wctx, cancel := context.WithCancel(ctx)
		wch := wcli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
		if resp := <-wch; !resp.Created {
			cancel()
			return fmt.Errorf("etcd floor: watch not created: %v", resp.Err())
		}
		got := make(chan []time.Duration, 1)
		go func() {
			var ds []time.Duration
			for len(ds) < events {
				resp, ok := <-wch
				if !ok || resp.Err() != nil {
					break
				}
				now := time.Now()
				for _, e := range resp.Events {
					v := string(e.Kv.Value)
					if i := strings.IndexByte(v, ' '); i > 0 {
						if ns, err := strconv.ParseInt(v[:i], 10, 64); err == nil {
							ds = append(ds, now.Sub(time.Unix(0, ns)))
						}
					}
				}
			}
			got <- ds
		}()
		var answers [4][]time.Duration
		var next atomic.Int64
		errs := make(chan error, 4)
		for w := range 4 {
			go func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= events {
						errs <- nil
						return
					}
					k := i % objects
					key := prefix + strconv.Itoa(k)
					sent := time.Now()
					val := strconv.FormatInt(sent.UnixNano(), 10) + " " + padding
					locks[k].Lock()
					resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", revs[k])).
						Then(clientv3.OpPut(key, val)).Commit()
					if err == nil && resp.Succeeded {
						revs[k] = resp.Header.Revision
					}
					locks[k].Unlock()
					if err != nil {
						errs <- err
						return
					}
					if !resp.Succeeded {
						errs <- fmt.Errorf("etcd floor: %s changed under the benchmark", key)
						return
					}
					answers[w] = append(answers[w], time.Since(sent))
				}
			}()
		}
		for range 4 {
			if err := <-errs; err != nil {
				cancel()
				return err
			}
		}
		select {
		case ds := <-got:
			toEvent = append(toEvent, ds...)
		case <-time.After(time.Minute):
			cancel()
			return fmt.Errorf("etcd floor: round %d: events missing after a minute", r)
		}
		cancel()
		for _, a := range answers {
			toAnswer = append(toAnswer, a...)
		}
	}
	fmt.Fprintf(os.Stderr, "== etcd alone (%s), %d rounds of %d writes 4 at a time:\n", endpoint, rounds, events)
	fmt.Fprintf(os.Stderr, "   write send → its watch event: %s\n", percentiles(toEvent))
	fmt.Fprintf(os.Stderr, "   write send → its answer:      %s\n", percentiles(toAnswer))
	return nil
}

// percentiles formats the p50, p90, p99 and maximum of ds.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) time.Duration { return ds[int(q*float64(len(ds)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %v, p90 %v, p99 %v, max %v (%d samples)", at(0.5), at(0.9), at(0.99), ds[len(ds)-1].Round(10*time.Microsecond), len(ds))
}
