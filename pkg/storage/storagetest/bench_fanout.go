package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// benchFanOut: n watchers on namespace ns (fresh); each iteration creates
// one object there (benchFanOutWriters creates in flight), never more than
// benchFanOutWindow events ahead of the slowest watcher.
func benchFanOut(b *testing.B, s storage.Interface, n int, ns string) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	cur, err := s.CurrentRevision(ctx)
	if err != nil {
		b.Fatalf("current revision: %v", err)
	}
	tr := newFanOutTracker(n)
	lats := make([]latencies, n)
	ws := make([]watch.Interface, 0, n)
	var wg sync.WaitGroup
	defer func() {
		tr.stopping.Store(true)
		close(tr.quit)
		for _, w := range ws {
			w.Stop()
		}
		wg.Wait()
	}()
	setup := time.Now()
	for i := range n {
		w, err := s.Watch(ctx, "/configmaps/"+ns, storage.ListOptions{
			ResourceVersion: strconv.FormatUint(cur, 10),
			Recursive:       true,
			Predicate:       storage.SelectionPredicate{GetAttrs: storage.DefaultAttrs},
		})
		if err != nil {
			b.Fatalf("watch %d: %v", i, err)
		}
		ws = append(ws, w)
		wg.Go(func() { lats[i] = tr.receive(w) })
	}
	b.Logf("%d watchers started in %v", n, time.Since(setup).Round(time.Millisecond))

	sem := make(chan struct{}, benchFanOutWriters)
	var writes sync.WaitGroup
	var writeErr atomic.Pointer[error]
	seq := 0
	start := time.Now()
	for b.Loop() {
		if err := tr.waitDone(seq - benchFanOutWindow); err != nil {
			b.Fatalf("event %d: %v", seq-benchFanOutWindow, err)
		}
		if err := writeErr.Load(); err != nil {
			b.Fatal(*err)
		}
		sem <- struct{}{}
		i := seq
		seq++
		writes.Go(func() {
			defer func() { <-sem }()
			name := "e" + strconv.Itoa(i)
			t0 := time.Now()
			data := map[string]string{"seq": strconv.Itoa(i), "t": strconv.FormatInt(t0.UnixNano(), 10)}
			if err := s.Create(ctx, cmKey(ns, name), benchCM(ns, name, data), nil); err != nil {
				err = fmt.Errorf("create %s: %w", name, err)
				writeErr.CompareAndSwap(nil, &err)
			}
		})
	}
	writes.Wait()
	if err := writeErr.Load(); err != nil {
		b.Fatal(*err)
	}
	if err := tr.waitDone(seq - 1); err != nil {
		b.Fatalf("last event %d: %v", seq-1, err)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(seq*n)/elapsed.Seconds(), "events/s")

	tr.stopping.Store(true)
	for _, w := range ws {
		w.Stop()
	}
	wg.Wait()
	ws = nil
	var all latencies
	for _, l := range lats {
		all = append(all, l...)
	}
	all.report(b)
}

// fanOutTracker tells the writer which events every watcher has received.
// Watchers count their receipts per event (in a ring of counters indexed by
// sequence number) and the one that completes an event reports it on done.
// Writes are concurrent, so events complete out of sequence order; the
// writer keeps low, the first event not yet received by everyone.
type fanOutTracker struct {
	watchers int32
	counts   []atomic.Int32
	done     chan int
	quit     chan struct{} // closed when the benchmark ends
	stopping atomic.Bool   // watches closing now is expected

	failOnce sync.Once
	failed   chan struct{} // closed by fail
	err      error

	// Writer side only.
	complete []bool
	low      int
}

func newFanOutTracker(watchers int) *fanOutTracker {
	ring := 2 * benchFanOutWindow
	return &fanOutTracker{
		watchers: int32(watchers),
		counts:   make([]atomic.Int32, ring),
		done:     make(chan int, ring),
		quit:     make(chan struct{}),
		failed:   make(chan struct{}),
		complete: make([]bool, ring),
	}
}

func (tr *fanOutTracker) fail(err error) {
	tr.failOnce.Do(func() {
		tr.err = err
		close(tr.failed)
	})
}

// receive reads one watch until it closes and returns the latency of each
// event, from the start of its write.
func (tr *fanOutTracker) receive(w watch.Interface) latencies {
	var lat latencies
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Bookmark:
			continue
		case watch.Added:
		default:
			tr.fail(fmt.Errorf("unexpected %s event: %v", ev.Type, ev.Object))
			return lat
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			tr.fail(fmt.Errorf("event object is a %T, want a ConfigMap", ev.Object))
			return lat
		}
		seq, err1 := strconv.Atoi(cm.Data["seq"])
		t0, err2 := strconv.ParseInt(cm.Data["t"], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			tr.fail(fmt.Errorf("event %s: %w", cm.Name, err))
			return lat
		}
		lat = append(lat, time.Since(time.Unix(0, t0)))
		c := &tr.counts[seq%len(tr.counts)]
		if c.Add(1) == tr.watchers {
			c.Store(0)
			select {
			case tr.done <- seq:
			case <-tr.quit:
				return lat
			}
		}
	}
	if !tr.stopping.Load() {
		tr.fail(errors.New("a watch closed early (a watcher was cut off?)"))
	}
	return lat
}

// waitDone waits until every watcher has received every event up to seq.
func (tr *fanOutTracker) waitDone(seq int) error {
	var timeout <-chan time.Time
	for tr.low <= seq {
		if timeout == nil {
			t := time.NewTimer(benchWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case s := <-tr.done:
			tr.complete[s%len(tr.complete)] = true
			for tr.complete[tr.low%len(tr.complete)] {
				tr.complete[tr.low%len(tr.complete)] = false
				tr.low++
			}
		case <-tr.failed:
			return tr.err
		case <-timeout:
			return fmt.Errorf("not received by every watcher within %v", benchWait)
		}
	}
	return nil
}
