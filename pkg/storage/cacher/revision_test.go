package cacher

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeRevisions is a read of the current revision that the test answers by
// hand: each read announces itself on started and returns what is sent on
// answer.
type fakeRevisions struct {
	started chan struct{}
	answer  chan uint64
}

func (f *fakeRevisions) read(ctx context.Context) (uint64, error) {
	f.started <- struct{}{}
	select {
	case rev := <-f.answer:
		return rev, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// queued waits until n requests wait for the next read (not started).
func queued(t *testing.T, r *revisionReads, n int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		r.mu.Lock()
		got := 0
		if r.next != nil {
			got = r.next.waiters
		}
		r.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRevisionReadsNeverJoinARunningRead: a request that arrives while a
// read is in flight does not take that read's answer (it may predate the
// request); it waits for the next read, which every request arriving
// meanwhile shares.
func TestRevisionReadsNeverJoinARunningRead(t *testing.T) {
	var r revisionReads
	f := &fakeRevisions{started: make(chan struct{}), answer: make(chan uint64)}
	ctx := context.Background()
	type result struct {
		who string
		rev uint64
	}
	results := make(chan result, 4)
	ask := func(who string) {
		rev, _, err := r.current(ctx, f.read)
		if err != nil {
			t.Errorf("%s: %v", who, err)
		}
		results <- result{who, rev}
	}

	go ask("first")
	<-f.started // the first read is in flight
	go ask("second")
	go ask("third")
	queued(t, &r, 2)
	f.answer <- 10 // the first read answers
	if got := <-results; got != (result{"first", 10}) {
		t.Fatalf("got %v, want first at 10", got)
	}
	<-f.started // the second read starts only now
	f.answer <- 20
	got := map[string]uint64{}
	for range 2 {
		res := <-results
		got[res.who] = res.rev
	}
	if got["second"] != 20 || got["third"] != 20 {
		t.Fatalf("got %v, want second and third at 20 (the read after they arrived)", got)
	}
	if n := r.reads.Load(); n != 2 {
		t.Fatalf("reads: %d, want 2", n)
	}

	// Idle again: the next request starts a read of its own.
	go ask("fourth")
	<-f.started
	f.answer <- 30
	if res := <-results; res != (result{"fourth", 30}) {
		t.Fatalf("got %v, want fourth at 30", res)
	}
}

// TestRevisionReadsContext: a waiter whose context ends returns at once;
// the shared read goes on for the others.
func TestRevisionReadsContext(t *testing.T) {
	var r revisionReads
	f := &fakeRevisions{started: make(chan struct{}), answer: make(chan uint64)}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, _, err := r.current(ctx, f.read)
		errs <- err
	}()
	<-f.started
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	revs := make(chan uint64, 1)
	go func() {
		rev, _, _ := r.current(context.Background(), f.read)
		revs <- rev
	}()
	f.answer <- 5 // the abandoned read
	<-f.started   // the next one, for the second waiter
	f.answer <- 6
	if rev := <-revs; rev != 6 {
		t.Fatalf("got %d, want 6", rev)
	}
}

// TestRevisionReadsShareAContextUntilHalfItsTimeout: back-to-back reads
// share one context while at least half of the timeout is left of it; a
// read that starts later, or after a read that ran out of time, gets a new
// one, so no read starts on an ended context or with less than half the
// timeout.
func TestRevisionReadsShareAContextUntilHalfItsTimeout(t *testing.T) {
	const timeout = 400 * time.Millisecond
	r := revisionReads{timeout: timeout}
	type seen struct {
		deadline time.Time
		err      error
		at       time.Time
	}
	reads := make(chan seen, 8)
	release := make(chan struct{})
	read := func(ctx context.Context) (uint64, error) {
		d, _ := ctx.Deadline()
		reads <- seen{d, ctx.Err(), time.Now()}
		select {
		case <-release:
			return 1, nil
		case <-ctx.Done(): // the first read runs out of time
			return 0, ctx.Err()
		}
	}
	done := make(chan error, 3)
	ask := func() {
		_, _, err := r.current(context.Background(), read)
		done <- err
	}
	go ask()
	first := <-reads
	go ask()
	queued(t, &r, 1)
	// The first read ends with its context; the second must not start on
	// that ended context.
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first read: %v, want its context's deadline", err)
	}
	second := <-reads
	if second.err != nil || !second.deadline.After(first.deadline) {
		t.Fatalf("second read started on context (deadline %v, err %v), want a new one after %v", second.deadline, second.err, first.deadline)
	}
	// A third read queued behind the second, starting right after it,
	// shares the second's context.
	go ask()
	queued(t, &r, 1)
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	third := <-reads
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if third.deadline.Sub(third.at) < timeout/2 {
		t.Fatalf("third read started with %v left, want at least %v", third.deadline.Sub(third.at), timeout/2)
	}
	if !third.deadline.Equal(second.deadline) && third.at.Sub(second.at) < timeout/4 {
		t.Fatalf("third read (started %v after the second) has a context of its own, want the second's", third.at.Sub(second.at))
	}
}
