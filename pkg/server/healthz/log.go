package healthz

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

const (
	// logFlushPeriod is how often the log check flushes the log buffer.
	logFlushPeriod = time.Minute
	// logBlockedAfter is how old the last successful flush may get before
	// the log check fails.
	logBlockedAfter = 2 * time.Minute
)

var errLoggingBlocked = errors.New("logging blocked")

// LogCheck is the "log" check (health.md 17). On its first Check it starts a
// goroutine that flushes the log buffer at once and then once a minute; it
// passes while the last successful flush is less than two minutes old and
// fails with "logging blocked" otherwise. The goroutine belongs to the
// LogCheck: call [LogCheck.Stop] to end it.
type LogCheck struct {
	flush func() error
	clock clock.WithTicker

	startOnce    sync.Once
	lastVerified atomic.Pointer[time.Time]

	stopOnce sync.Once
	stop     chan struct{} // closed by Stop
	done     chan struct{} // closed when the flusher has ended (or never started)
}

var _ HealthChecker = (*LogCheck)(nil)

// NewLogHealthz returns a log check. flush flushes the log buffer and
// reports whether it succeeded; nil means there is nothing to flush (every
// flush succeeds). clk nil means the real clock.
func NewLogHealthz(flush func() error, clk clock.WithTicker) *LogCheck {
	if flush == nil {
		flush = func() error { return nil }
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &LogCheck{flush: flush, clock: clk, stop: make(chan struct{}), done: make(chan struct{})}
}

// Name returns "log".
func (l *LogCheck) Name() string { return "log" }

// Check starts the flusher on first use and fails with "logging blocked"
// when the last successful flush is two minutes old or older.
func (l *LogCheck) Check(*http.Request) error {
	l.startOnce.Do(l.start)
	if l.clock.Since(*l.lastVerified.Load()) < logBlockedAfter {
		return nil
	}
	return errLoggingBlocked
}

// Stop ends the flusher and waits for it; a flush in progress is waited for.
// It is idempotent and safe to call concurrently with Check. After Stop the
// check no longer flushes, so it starts failing two minutes later.
func (l *LogCheck) Stop() {
	l.stopOnce.Do(func() { close(l.stop) })
	// If the flusher never started, make sure it never will.
	l.startOnce.Do(func() {
		l.markVerified()
		close(l.done)
	})
	<-l.done
}

func (l *LogCheck) start() {
	l.markVerified()
	// The ticker is created here, not in the goroutine, so the tick
	// schedule starts at first use.
	ticker := l.clock.NewTicker(logFlushPeriod)
	go l.run(ticker)
}

func (l *LogCheck) run(ticker clock.Ticker) {
	defer close(l.done)
	defer ticker.Stop()
	l.flushOnce()
	for {
		select {
		case <-l.stop:
			return
		case <-ticker.C():
			l.flushOnce()
		}
	}
}

func (l *LogCheck) flushOnce() {
	select {
	case <-l.stop:
		return
	default:
	}
	if l.flush() == nil {
		l.markVerified()
	}
}

func (l *LogCheck) markVerified() {
	now := l.clock.Now()
	l.lastVerified.Store(&now)
}
