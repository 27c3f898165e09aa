package memory

import "sync"

// queueShrinkAbove is the largest buffer an emptied queue keeps: a burst
// that grew it further gives the memory back once the watcher caught up.
const queueShrinkAbove = 64

// eventQueue is one watcher's queue of undelivered events: a ring that
// starts empty and grows (doubling) up to limit, so an idle watcher costs
// no buffer at all while a slow one may still hold limit events before it
// is cut off, as a channel of capacity limit did. Writers push with the
// backend lock held and never block; the watcher's goroutine pops.
type eventQueue struct {
	mu    sync.Mutex
	buf   []*event // ring; nil until the first push
	head  int      // index of the oldest event in buf
	n     int      // events queued
	limit int
	ready chan struct{} // a token after a push; capacity 1
}

func newEventQueue(limit int) *eventQueue {
	return &eventQueue{limit: limit, ready: make(chan struct{}, 1)}
}

// push queues ev and reports whether it fitted; false means the queue
// already holds limit events.
func (q *eventQueue) push(ev *event) bool {
	q.mu.Lock()
	if q.n >= q.limit {
		q.mu.Unlock()
		return false
	}
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)%len(q.buf)] = ev
	q.n++
	q.mu.Unlock()
	q.signal()
	return true
}

// pushQuiet is push without waking the reader: the caller calls signal
// once it has pushed a batch (Backend.Apply), so that a reader wakes once
// per batch instead of competing with the writer for every event.
func (q *eventQueue) pushQuiet(ev *event) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n >= q.limit {
		return false
	}
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)%len(q.buf)] = ev
	q.n++
	return true
}

// signal leaves the reader a token (at most one waits).
func (q *eventQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default: // a token is already waiting
	}
}

// grow doubles the ring (at least 4, at most limit), keeping the order.
func (q *eventQueue) grow() {
	size := min(max(4, 2*len(q.buf)), q.limit)
	buf := make([]*event, size)
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = buf, 0
}

// pop returns the oldest queued event, if any.
func (q *eventQueue) pop() (*event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		if len(q.buf) > queueShrinkAbove {
			q.buf, q.head = nil, 0
		}
		return nil, false
	}
	ev := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return ev, true
}
