package metrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WatermarkPeriod is how often a Watermark publishes its highest count
// (upstream's inflightUsageMetricUpdatePeriod).
const WatermarkPeriod = time.Second

// newInqueue is apiserver_current_inqueue_requests (k8s.io/apiserver
// pkg/endpoints/metrics). Upstream sets it only from API Priority and
// Fairness's queue watermark, so it has no series until that publishes.
func newInqueue() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_current_inqueue_requests",
		Help: "[ALPHA] Maximal number of queued requests in this apiserver per request kind in last second.",
	}, []string{"request_kind"})
}

// Watermark counts the requests in one phase of handling (executing, or
// waiting in a queue) by kind, and publishes the highest count each kind
// reached since the last publication to its gauge, as upstream's
// requestWatermark: the highest since the last publication, not the
// current count, so a request that stays for several periods shows in
// the first only (upstream's behaviour). A nil *Watermark records
// nothing; methods are safe for concurrent use.
type Watermark struct {
	readOnly, mutating       atomic.Int64 // current counts
	maxReadOnly, maxMutating atomic.Int64 // highest since the last publication

	vec *prometheus.GaugeVec
	// observe, if set, is told each kind's new count (API Priority and
	// Fairness's apiserver_flowcontrol_read_vs_write_current_requests).
	observe func(mutating bool, n int64)
}

// Observe has f told each new count, by kind, from now on. Call it before
// the watermark is used (it is not synchronized with Note).
func (w *Watermark) Observe(f func(mutating bool, n int64)) {
	if w != nil {
		w.observe = f
	}
}

// ExecutingMark returns the watermark of executing requests, published to
// apiserver_current_inflight_requests (API Priority and Fairness's; the
// max-in-flight filter sets that gauge itself).
func (m *Metrics) ExecutingMark() *Watermark {
	if m == nil {
		return nil
	}
	return m.executing
}

// WaitingMark returns the watermark of requests waiting in API Priority
// and Fairness's queues, published to apiserver_current_inqueue_requests.
func (m *Metrics) WaitingMark() *Watermark {
	if m == nil {
		return nil
	}
	return m.waiting
}

// Note adds delta to the count of the request's kind (mutating or
// read-only) and raises that kind's watermark to the new count.
func (w *Watermark) Note(mutating bool, delta int) {
	if w == nil {
		return
	}
	c, high := &w.readOnly, &w.maxReadOnly
	if mutating {
		c, high = &w.mutating, &w.maxMutating
	}
	n := c.Add(int64(delta))
	if w.observe != nil {
		w.observe(mutating, n)
	}
	for {
		h := high.Load()
		if n <= h || high.CompareAndSwap(h, n) {
			return
		}
	}
}

// Publish sets the gauges to the watermarks and starts the next period
// from 0 (upstream's maintenance does the same once a period).
func (w *Watermark) Publish() {
	if w == nil {
		return
	}
	ro, mu := w.maxReadOnly.Swap(0), w.maxMutating.Swap(0)
	w.vec.WithLabelValues(ReadOnlyKind).Set(float64(ro))
	w.vec.WithLabelValues(MutatingKind).Set(float64(mu))
}

// RunWatermarks publishes the executing and waiting watermarks every
// WatermarkPeriod until ctx is done (upstream's
// priority-and-fairness-filter post-start hook).
func (m *Metrics) RunWatermarks(ctx context.Context) {
	if m == nil {
		return
	}
	t := time.NewTicker(WatermarkPeriod)
	defer t.Stop()
	for {
		m.executing.Publish()
		m.waiting.Publish()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
