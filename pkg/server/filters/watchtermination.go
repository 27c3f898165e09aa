package filters

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// ErrWatchTerminated is the cancellation cause of a watch request's context
// when the server ends active watches at shutdown (lifecycle.md 31).
var ErrWatchTerminated = errors.New("the apiserver is shutting down: watch terminated")

// WatchTerminated reports whether ctx was cancelled because the server is
// ending active watches. A watch handler that sees its context done and this
// true should end the stream cleanly (finish the 200 response, no error
// event) instead of treating it as a client disconnect.
func WatchTerminated(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrWatchTerminated)
}

// MinWatchDrainRate is the floor of watch returns per second while draining.
const MinWatchDrainRate = 200

// WatchDrainer is the rate-limited wait group of active watch requests
// (lifecycle.md 31), used when --shutdown-watch-termination-grace-period
// G > 0.
//
// Protocol:
//  1. WithWatchTermination registers each watch and cancels its request
//     context with cause ErrWatchTerminated when the drain starts.
//  2. At NotAcceptingNewRequest the server calls Wait(G). Wait refuses new
//     watches (they get the 503 of lifecycle.md 22, no exemptions), cancels
//     every active one, and returns when all have returned or G has passed.
//  3. While Wait runs, the returns of watch handlers are paced at
//     max(200, N/G) per second with burst 1 (N = active watches when Wait
//     started): each handler's ServeHTTP, and so the end of its response,
//     is held until its turn. Pacing stops when Wait returns.
//
// InFlightRequestsDrained needs both the non-long-running SafeWaitGroup and
// Wait to have finished. Create with NewWatchDrainer; safe for concurrent
// use.
type WatchDrainer struct {
	mu       sync.Mutex
	active   map[uint64]context.CancelCauseFunc
	nextID   uint64
	waiting  bool
	drained  chan struct{} // closed once waiting and active is empty
	isClosed bool          // drained closed
	interval time.Duration // between paced returns
	nextSlot time.Time
	graceEnd chan struct{} // closed when Wait returns: pacing stops
}

// NewWatchDrainer returns an empty drainer.
func NewWatchDrainer() *WatchDrainer {
	return &WatchDrainer{
		active:   make(map[uint64]context.CancelCauseFunc),
		drained:  make(chan struct{}),
		graceEnd: make(chan struct{}),
	}
}

// Active returns the number of watches being served.
func (d *WatchDrainer) Active() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.active)
}

// Wait ends active watches and waits for them, at most grace (see the type
// comment). It returns the number of active watches before and after. It
// must be called once; grace <= 0 returns at once without ending watches.
func (d *WatchDrainer) Wait(grace time.Duration) (before, after int) {
	d.mu.Lock()
	if d.waiting || grace <= 0 {
		n := len(d.active)
		d.mu.Unlock()
		return n, n
	}
	d.waiting = true
	before = len(d.active)
	rate := float64(before) / grace.Seconds()
	if rate < MinWatchDrainRate {
		rate = MinWatchDrainRate
	}
	d.interval = time.Duration(float64(time.Second) / rate)
	cancels := make([]context.CancelCauseFunc, 0, before)
	for _, c := range d.active {
		cancels = append(cancels, c)
	}
	if before == 0 {
		d.closeDrainedLocked()
	}
	d.mu.Unlock()

	for _, c := range cancels {
		c(ErrWatchTerminated)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-d.drained:
	case <-timer.C:
	}
	close(d.graceEnd)
	return before, d.Active()
}

// add registers a watch; false once the drain has begun.
func (d *WatchDrainer) add(cancel context.CancelCauseFunc) (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting {
		return 0, false
	}
	d.nextID++
	d.active[d.nextID] = cancel
	return d.nextID, true
}

// done unregisters a watch, first waiting for its paced turn if draining.
func (d *WatchDrainer) done(id uint64) {
	d.mu.Lock()
	if d.waiting {
		now := time.Now()
		slot := d.nextSlot
		if slot.Before(now) {
			slot = now
		}
		d.nextSlot = slot.Add(d.interval)
		d.mu.Unlock()
		if wait := time.Until(slot); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-d.graceEnd:
			}
			t.Stop()
		}
		d.mu.Lock()
	}
	delete(d.active, id)
	if d.waiting && len(d.active) == 0 {
		d.closeDrainedLocked()
	}
	d.mu.Unlock()
}

func (d *WatchDrainer) closeDrainedLocked() {
	if !d.isClosed {
		d.isClosed = true
		close(d.drained)
	}
}

// WithWatchTermination tracks every watch request in d (see WatchDrainer).
// A nil d disables the filter (G = 0: watches are not tracked).
func WithWatchTermination(handler http.Handler, d *WatchDrainer, logger *slog.Logger) http.Handler {
	if d == nil {
		return handler
	}
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok {
			internalError(w, r, errNoRequestInfo, logger)
			return
		}
		if !info.IsResourceRequest || info.Verb != "watch" {
			handler.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancelCause(r.Context())
		defer cancel(nil)
		id, ok := d.add(cancel)
		if !ok {
			writeShuttingDown(w)
			return
		}
		defer d.done(id)
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
}
