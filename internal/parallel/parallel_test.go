package parallel

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// Every piece runs once, at most n at a time, and the errors come back in
// the order of work.
func TestRun(t *testing.T) {
	var running, peak, ran atomic.Int32
	boom := errors.New("boom")
	work := make([]func() error, 20)
	for i := range work {
		work[i] = func() error {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			ran.Add(1)
			if i%7 == 3 {
				return boom
			}
			return nil
		}
	}
	errs := Run(3, work)
	if ran.Load() != 20 {
		t.Fatalf("%d pieces ran, want 20", ran.Load())
	}
	if p := peak.Load(); p > 3 {
		t.Errorf("%d pieces at once, want at most 3", p)
	}
	for i, err := range errs {
		if want := i%7 == 3; (err != nil) != want {
			t.Errorf("error %d = %v, want an error: %v", i, err, want)
		}
	}
	if got := Run(0, nil); len(got) != 0 {
		t.Errorf("no work: %v", got)
	}
}
