package flowcontrol

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// level is one priority level: its limits, its queues and its requests.
//
// Fair queuing: start-time fair queuing over the queues, each request's
// cost its work, seats times duration (seat-seconds, as upstream). A
// queue's virtual start is where its head request would start; the
// dispatcher takes the head of the non-empty queue with the lowest virtual
// start, which then advances by the request's estimated work (seats times
// the level's average execution time) and is corrected by the actual work
// when the request finishes; a queue that becomes non-empty starts at the
// level's virtual time (the virtual start of the last request dispatched),
// so an idle flow gets no credit. (Upstream's virtual clock advances with
// real time shared among the active queues; kapi's is the start tag of
// the request last dispatched: start-time fair queuing.) Flows are mapped to queues by shuffle
// sharding: the flow's hash deals a hand of handSize queues and the
// request joins the least loaded of them.
type level struct {
	c    *Controller
	name string

	mu  sync.Mutex
	uid string
	// uidValues is []string{uid}, the response header's value (see
	// Classification.PriorityLevelUIDValues).
	uidValues []string
	exempt    bool
	reject    bool // limitResponse Reject

	shares                       int32
	lendablePercent              int32
	borrowingPercent             *int32
	nominalCL, lendableCL        int
	borrowingCL                  int // upper bound of current = nominal + borrowing
	currentCL                    int
	handSize, queueLengthLimit   int
	queues                       []*queue
	seatsInUse, executing        int
	waiting, waitingSeats        int
	vt                           float64
	avgDuration                  float64 // seconds, moving average of execution times
	dispatched, rejected         int64
	timedOut, cancelled          int64
	stats                        demandStats
	gauges                       levelGauges
	waitingDenominator           int     // queues times their length limit, at least 1
	demandSum, demandSq, demandT float64 // integrals of seat demand over the period
	demandMax                    int
	lastChange                   time.Time
}

type queue struct {
	index        int
	reqs         []*waiter
	virtualStart float64
	seatsInUse   int
	executing    int
}

type waiter struct {
	cls       Classification
	width     Width
	q         *queue
	ready     chan struct{}
	decided   bool
	arrive    time.Time
	start     time.Time
	desc      RequestDescription
	executing bool
	work      float64 // estimated work charged to the queue
}

// initialDuration is the execution time assumed before any request of
// the level finished.
const initialDuration = 0.001

// estimatedWork is seats times the level's average execution time
// (lv.mu held).
func (lv *level) estimatedWork(seats int) float64 {
	d := lv.avgDuration
	if d <= 0 {
		d = initialDuration
	}
	return float64(seats) * d
}

func nominalShares(pl *flowcontrolv1.PriorityLevelConfiguration) int32 {
	switch {
	case pl.Spec.Limited != nil && pl.Spec.Limited.NominalConcurrencyShares != nil:
		return *pl.Spec.Limited.NominalConcurrencyShares
	case pl.Spec.Limited != nil:
		return 30
	case pl.Spec.Exempt != nil && pl.Spec.Exempt.NominalConcurrencyShares != nil:
		return *pl.Spec.Exempt.NominalConcurrencyShares
	}
	return 0
}

// identity is the level's object UID and whether it is exempt, read
// under its lock (configure changes them when the configuration does).
func (lv *level) identity() (uid string, uidValues []string, exempt bool) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.uid, lv.uidValues, lv.exempt
}

// configure (re)applies pl, computing the nominal, lendable and borrowing
// limits as upstream: nominal = ceil(serverCL*shares/sumShares), lendable =
// round(nominal*lendablePercent/100), borrowing limit =
// round(nominal*borrowingLimitPercent/100) or, unbounded, serverCL (the
// upper limit is nominal plus that).
func (lv *level) configure(pl *flowcontrolv1.PriorityLevelConfiguration, serverCL, sumShares int, isNew bool) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if lv.uidValues == nil || lv.uid != string(pl.UID) {
		lv.uidValues = []string{string(pl.UID)} // never changed once made: responses share it
	}
	lv.uid = string(pl.UID)
	lv.exempt = pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt
	lv.shares = nominalShares(pl)
	lv.lendablePercent, lv.borrowingPercent = 0, nil
	lv.reject = false
	handSize, queues, qll := 1, 1, 0
	if l := pl.Spec.Limited; l != nil {
		if l.LendablePercent != nil {
			lv.lendablePercent = *l.LendablePercent
		}
		lv.borrowingPercent = l.BorrowingLimitPercent
		if l.LimitResponse.Type == flowcontrolv1.LimitResponseTypeReject || l.LimitResponse.Queuing == nil {
			lv.reject = true
		} else {
			q := l.LimitResponse.Queuing
			handSize, queues, qll = int(q.HandSize), int(q.Queues), int(q.QueueLengthLimit)
		}
	}
	if e := pl.Spec.Exempt; e != nil && e.LendablePercent != nil {
		lv.lendablePercent = *e.LendablePercent
	}
	prevNominal := lv.nominalCL
	lv.nominalCL = int(math.Ceil(float64(serverCL) * float64(lv.shares) / float64(sumShares)))
	lv.lendableCL = int(math.Round(float64(lv.nominalCL) * float64(lv.lendablePercent) / 100))
	if lv.borrowingPercent != nil {
		lv.borrowingCL = lv.nominalCL + int(math.Round(float64(lv.nominalCL)*float64(*lv.borrowingPercent)/100))
	} else {
		lv.borrowingCL = lv.nominalCL + serverCL
	}
	switch {
	case isNew:
		// Upstream's initial limit; the adjustment that follows every
		// configuration change sets it at once.
		lv.currentCL = lv.nominalCL - lv.lendableCL/2
	case lv.nominalCL != prevNominal || lv.currentCL < lv.nominalCL-lv.lendableCL || lv.currentCL > lv.borrowingCL:
		lv.currentCL = lv.nominalCL
	}
	if handSize < 1 {
		handSize = 1
	}
	if queues < 1 {
		queues = 1
	}
	lv.handSize, lv.queueLengthLimit = min(handSize, queues), qll
	// Upstream's denominator of the waiting requests' utilization: the
	// queue length limit (at least 1) times the queues (when queuing).
	lv.waitingDenominator = max(qll, 1)
	if qll > 0 {
		lv.waitingDenominator *= queues
	}
	if len(lv.queues) != queues {
		// Waiting requests keep their queue (they are dispatched from
		// the old queues first); new requests use the new ones.
		old := lv.queues
		lv.queues = make([]*queue, queues)
		for i := range lv.queues {
			lv.queues[i] = &queue{index: i, virtualStart: lv.vt}
		}
		for _, q := range old {
			if len(q.reqs) > 0 || q.executing > 0 {
				nq := lv.queues[q.index%queues]
				for _, w := range q.reqs {
					w.q = nq
				}
				nq.reqs = append(nq.reqs, q.reqs...)
				nq.seatsInUse += q.seatsInUse
				nq.executing += q.executing
			}
		}
	}
	lv.dispatchLocked()
}

// noteDemandLocked integrates the seat demand (executing plus waiting
// seats) up to now, for the borrowing adjustment.
func (lv *level) noteDemandLocked(now time.Time) {
	dt := now.Sub(lv.lastChange).Seconds()
	if dt > 0 {
		d := float64(lv.seatsInUse + lv.waitingSeats)
		lv.demandSum += d * dt
		lv.demandSq += d * d * dt
		lv.demandT += dt
	}
	lv.lastChange = now
	if d := lv.seatsInUse + lv.waitingSeats; d > lv.demandMax {
		lv.demandMax = d
	}
}

// deal returns the hand of queues for a flow hash: handSize distinct
// indices drawn from the hash (upstream's shuffle-sharding dealer shape).
func (lv *level) deal(hash uint64, hand []int) []int {
	n := len(lv.queues)
	hand = hand[:0]
	// sorted holds the cards dealt so far in ascending order (hands are
	// small: at most the 16 of chooseQueue's buffer is typical).
	var sortedBuf [16]int
	sorted := sortedBuf[:0]
	for i := 0; i < lv.handSize; i++ {
		remaining := uint64(n - i)
		card := int(hash % remaining)
		hash /= remaining
		// card is an index among the cards not dealt yet: skip over the
		// dealt ones below it.
		pos := 0
		for pos < len(sorted) && card >= sorted[pos] {
			card++
			pos++
		}
		sorted = append(sorted, 0)
		copy(sorted[pos+1:], sorted[pos:])
		sorted[pos] = card
		hand = append(hand, card)
	}
	return hand
}

// chooseQueue picks the least loaded queue of the flow's hand (waiting
// plus executing seats).
func (lv *level) chooseQueue(hash uint64) *queue {
	var buf [16]int
	hand := lv.deal(hash, buf[:0])
	best := lv.queues[hand[0]]
	bestLoad := best.load()
	for _, i := range hand[1:] {
		if l := lv.queues[i].load(); l < bestLoad {
			best, bestLoad = lv.queues[i], l
		}
	}
	return best
}

func (q *queue) load() int {
	n := q.seatsInUse
	for _, w := range q.reqs {
		n += w.width.Seats
	}
	return n
}

// canAccommodate: the seats fit in the current limit, or nothing executes
// (a request wider than the limit runs alone, as upstream).
func (lv *level) canAccommodate(seats int) bool {
	return lv.seatsInUse+seats <= lv.currentCL || lv.seatsInUse == 0
}

func (lv *level) admit(ctx context.Context, cls Classification, w Width, wait time.Duration, desc RequestDescription) (*Ticket, error) {
	m := lv.c.metrics
	now := lv.c.now()
	lv.mu.Lock()
	if lv.exempt {
		lv.noteDemandLocked(now)
		lv.executing++
		lv.seatsInUse += w.Seats
		lv.dispatched++
		lv.publishLocked()
		lv.mu.Unlock()
		m.dispatched(cls, w.Seats, false, 0)
		return &Ticket{lv: lv, cls: cls, width: w, start: now}, nil
	}
	// Dispatch at once only when nothing waits (no overtaking).
	if lv.waiting == 0 && lv.canAccommodate(w.Seats) {
		var q *queue
		if !lv.reject {
			q = lv.chooseQueue(cls.hashFlow)
			if q.virtualStart < lv.vt {
				q.virtualStart = lv.vt
			}
			lv.vt = q.virtualStart
			q.virtualStart += lv.estimatedWork(w.Seats)
			q.seatsInUse += w.Seats
			q.executing++
		}
		lv.noteDemandLocked(now)
		lv.seatsInUse += w.Seats
		lv.executing++
		lv.dispatched++
		work := lv.estimatedWork(w.Seats)
		lv.publishLocked()
		lv.mu.Unlock()
		if q != nil {
			// Upstream enqueues it and dispatches it at once: its
			// queue had nothing else waiting.
			m.enqueued(cls, 0, 0, 1)
		}
		m.dispatched(cls, w.Seats, true, 0)
		return &Ticket{lv: lv, cls: cls, width: w, q: q, start: now, work: work}, nil
	}
	if lv.reject {
		lv.rejected++
		lv.mu.Unlock()
		m.rejectedReq(cls, ReasonConcurrencyLimit, false, 0)
		return nil, &Rejection{Reason: ReasonConcurrencyLimit}
	}
	q := lv.chooseQueue(cls.hashFlow)
	if len(q.reqs) >= lv.queueLengthLimit {
		lv.rejected++
		lv.mu.Unlock()
		m.rejectedReq(cls, ReasonQueueFull, false, 0)
		return nil, &Rejection{Reason: ReasonQueueFull}
	}
	wt := &waiter{cls: cls, width: w, q: q, ready: make(chan struct{}), arrive: now, desc: desc}
	if len(q.reqs) == 0 && q.virtualStart < lv.vt {
		q.virtualStart = lv.vt
	}
	lv.noteDemandLocked(now)
	q.reqs = append(q.reqs, wt)
	lv.waiting++
	lv.waitingSeats += w.Seats
	m.enqueued(cls, 1, w.Seats, len(q.reqs))
	lv.noteQueue(wt, 1)
	lv.dispatchLocked()
	lv.publishLocked()
	lv.mu.Unlock()

	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-wt.ready:
	case <-timer:
	case <-ctx.Done():
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	waited := lv.c.now().Sub(wt.arrive)
	if wt.decided {
		// The wait is until the dispatch decision, not until this
		// goroutine ran again (on a busy machine, much later).
		m.dispatched(cls, w.Seats, true, wt.start.Sub(wt.arrive))
		return &Ticket{lv: lv, cls: cls, width: w, q: wt.q, start: wt.start, waiter: wt, work: wt.work}, nil
	}
	// Gave up: leave the queue.
	lv.noteDemandLocked(lv.c.now())
	q = wt.q
	for i, x := range q.reqs {
		if x == wt {
			q.reqs = append(q.reqs[:i], q.reqs[i+1:]...)
			break
		}
	}
	lv.waiting--
	lv.waitingSeats -= w.Seats
	m.inqueue(cls, -1, -w.Seats)
	lv.noteQueue(wt, -1)
	lv.publishLocked()
	reason := ReasonTimeout
	if errors.Is(ctx.Err(), context.Canceled) {
		reason = ReasonCancelled
		lv.cancelled++
	} else {
		lv.timedOut++
	}
	lv.rejected++
	m.rejectedReq(cls, reason, true, waited)
	return nil, &Rejection{Reason: reason}
}

// noteQueue tells the controller's QueueNote that wt entered or left its
// queue (lv.mu held).
func (lv *level) noteQueue(wt *waiter, delta int) {
	if f := lv.c.queueNote; f != nil {
		f(&wt.desc, delta)
	}
}

// dispatchLocked starts waiting requests while they fit: always the head
// of the non-empty queue with the lowest virtual start.
func (lv *level) dispatchLocked() {
	for lv.waiting > 0 {
		var best *queue
		for _, q := range lv.queues {
			if len(q.reqs) == 0 {
				continue
			}
			// Lowest virtual start; on a tie (queues are clamped to the
			// level's virtual time), the shorter queue, then the one with
			// fewer seats executing: the lighter flow goes first.
			if best == nil || q.virtualStart < best.virtualStart ||
				(q.virtualStart == best.virtualStart && (len(q.reqs) < len(best.reqs) ||
					(len(q.reqs) == len(best.reqs) && q.seatsInUse < best.seatsInUse))) {
				best = q
			}
		}
		if best == nil {
			return
		}
		wt := best.reqs[0]
		if !lv.canAccommodate(wt.width.Seats) {
			// Upstream tries only while seats are free.
			if lv.seatsInUse < lv.currentCL {
				lv.c.metrics.noAccommodation(wt.cls)
			}
			return
		}
		now := lv.c.now()
		lv.noteDemandLocked(now)
		best.reqs = best.reqs[1:]
		lv.vt = best.virtualStart
		wt.work = lv.estimatedWork(wt.width.Seats)
		best.virtualStart += wt.work
		best.seatsInUse += wt.width.Seats
		best.executing++
		lv.waiting--
		lv.waitingSeats -= wt.width.Seats
		lv.seatsInUse += wt.width.Seats
		lv.executing++
		lv.dispatched++
		wt.decided, wt.executing, wt.start = true, true, now
		lv.c.metrics.inqueue(wt.cls, -1, -wt.width.Seats)
		lv.noteQueue(wt, -1)
		close(wt.ready)
	}
}

// Ticket is an admitted request's hold on its level's seats.
type Ticket struct {
	lv     *level
	cls    Classification
	width  Width
	q      *queue
	start  time.Time
	waiter *waiter
	work   float64
	watch  bool // a watch's initial stage (type="watch" in the metrics)

	once sync.Once
}

// Finish releases the request's seats: at once, or, when the width has
// FinalSeats, after holding those for AdditionalLatency (as upstream's
// mutating requests' watch notification work). Idempotent.
func (t *Ticket) Finish() {
	if t == nil {
		return
	}
	t.once.Do(func() {
		lv, w := t.lv, t.width
		took := lv.c.now().Sub(t.start)
		lv.c.metrics.executed(t.cls, w.Seats, t.watch, took)
		lv.account(t.q, t.work, w.Seats, took)
		if w.FinalSeats > 0 && w.AdditionalLatency > 0 {
			lv.release(t.q, w.Seats-w.FinalSeats, 0)
			time.AfterFunc(w.AdditionalLatency, func() { lv.release(t.q, w.FinalSeats, 1) })
			return
		}
		lv.release(t.q, w.Seats, 1)
	})
}

// account corrects the queue's virtual start by the request's actual work
// and updates the level's average execution time.
func (lv *level) account(q *queue, charged float64, seats int, took time.Duration) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	d := took.Seconds()
	if lv.avgDuration <= 0 {
		lv.avgDuration = d
	} else {
		lv.avgDuration = 0.9*lv.avgDuration + 0.1*d
	}
	if q != nil {
		// No credit below the level's virtual time: a queue that finished
		// early does not get ahead of a flow that just arrived.
		q.virtualStart = max(q.virtualStart+float64(seats)*d-charged, lv.vt)
	}
}

// release gives back seats (negative: takes more) and, with done=1, ends
// the request's execution; then dispatches what now fits.
func (lv *level) release(q *queue, seats, done int) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	lv.noteDemandLocked(lv.c.now())
	lv.seatsInUse -= seats
	lv.executing -= done
	if q != nil {
		q.seatsInUse -= seats
		q.executing -= done
	}
	lv.dispatchLocked()
	lv.publishLocked()
}

// capacity is the level's queues times their length limit (0 when it
// does not queue) and its nominal limit.
func (lv *level) capacity() (waiting, executing int) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if !lv.exempt && !lv.reject {
		waiting = len(lv.queues) * lv.queueLengthLimit
	}
	return waiting, lv.nominalCL
}

// publishLocked sets the level's timing ratio histograms to its current
// seats in use, requests waiting and executing, and seat demand.
func (lv *level) publishLocked() {
	g := lv.gauges
	if g.seats == nil {
		return
	}
	now := time.Now()
	g.seats.setAt(float64(lv.seatsInUse), now)
	g.waiting.setAt(float64(lv.waiting), now)
	g.executing.setAt(float64(lv.executing), now)
	g.demand.setAt(float64(lv.seatsInUse+lv.waitingSeats), now)
}

// setDenominatorsLocked sets the histograms' denominators after an
// adjustment (upstream's Complete and the seat demand's SetDenominator):
// the current limit, or a tenth of the server's seats (at least 1) when
// it is 0; the waiting requests' is the queues' capacity.
func (lv *level) setDenominatorsLocked(serverCL int) {
	d := lv.currentCL
	if d <= 0 {
		d = max(1, int(math.Round(float64(serverCL)/10)))
	}
	g := lv.gauges
	g.waiting.setDenominator(float64(lv.waitingDenominator))
	g.executing.setDenominator(float64(d))
	g.seats.setDenominator(float64(d))
	g.demand.setDenominator(float64(d))
}

func (lv *level) state() LevelState {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return LevelState{
		Name: lv.name, Exempt: lv.exempt,
		NominalCL: lv.nominalCL, LendableCL: lv.lendableCL, BorrowingCL: lv.borrowingCL, CurrentCL: lv.currentCL,
		SeatsInUse: lv.seatsInUse, Executing: lv.executing, Waiting: lv.waiting,
		Dispatched: lv.dispatched, Rejected: lv.rejected, TimedOut: lv.timedOut, Cancelled: lv.cancelled,
	}
}
