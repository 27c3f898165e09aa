package metrics

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The waiting watermark: no series before the first publication (as
// upstream's vector, set only by its maintenance); then each kind's
// highest count since the previous publication, from 0 again after each.
func TestWaitingWatermark(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	const name = "apiserver_current_inqueue_requests"
	if got := gather(t, reg, name); len(got) != 0 {
		t.Fatalf("before the first publication: got %q, want no series", got)
	}
	w := m.WaitingMark()
	w.Publish()
	want := func(s ...string) {
		t.Helper()
		if got := gather(t, reg, name); strings.Join(got, ";") != strings.Join(s, ";") {
			t.Errorf("got %q, want %q", got, s)
		}
	}
	want(`request_kind="mutating" 0`, `request_kind="readOnly" 0`)

	// Three mutating requests queue, two leave; one read-only queues and
	// leaves: the period's highest counts are 3 and 1.
	for range 3 {
		w.Note(true, 1)
	}
	w.Note(true, -1)
	w.Note(true, -1)
	w.Note(false, 1)
	w.Note(false, -1)
	w.Publish()
	want(`request_kind="mutating" 3`, `request_kind="readOnly" 1`)
	// The mutating one still waiting does not show in the next period
	// (nothing moved: upstream's watermark restarts from 0).
	w.Publish()
	want(`request_kind="mutating" 0`, `request_kind="readOnly" 0`)
	// It leaves (count 0) and another arrives (count 1).
	w.Note(true, -1)
	w.Note(true, 1)
	w.Publish()
	want(`request_kind="mutating" 1`, `request_kind="readOnly" 0`)

	// The executing watermark publishes to the in-flight gauge.
	e := m.ExecutingMark()
	e.Note(false, 1)
	e.Note(false, 1)
	e.Note(false, -1)
	e.Publish()
	if got := gather(t, reg, "apiserver_current_inflight_requests"); strings.Join(got, ";") != `request_kind="mutating" 0;request_kind="readOnly" 2` {
		t.Errorf("in flight: got %q", got)
	}

	var nilM *Metrics
	nilM.WaitingMark().Note(true, 1)
	nilM.ExecutingMark().Publish()
	nilM.RunWatermarks(context.Background())
}

// RunWatermarks publishes at once and then every period, until stopped;
// Note is safe concurrently with it.
func TestRunWatermarks(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunWatermarks(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(gather(t, reg, "apiserver_current_inqueue_requests")) != 2 {
		if time.Now().After(deadline) {
			t.Fatal("no publication")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				m.WaitingMark().Note(true, 1)
				m.WaitingMark().Note(true, -1)
			}
		})
	}
	wg.Wait()
	m.WaitingMark().Note(false, 1)
	// The read-only request shows in the period it arrived in (the
	// mutating churn may show in the same one).
	for !strings.HasSuffix(strings.Join(gather(t, reg, "apiserver_current_inqueue_requests"), ";"), `;request_kind="readOnly" 1`) {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("got %q, want readOnly 1 published", gather(t, reg, "apiserver_current_inqueue_requests"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}
