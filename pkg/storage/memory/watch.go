package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unique"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
)

const msgWatchExpired = "The resourceVersion for the provided watch is too old."

// watcher is one watch. Writers put events on in (never blocking: a full
// queue terminates the watcher); the watcher decodes, filters and
// delivers them: on result, from a goroutine of its own started by the
// first ResultChan, or by calling the reader back on the reader's
// goroutine (Stream).
type watcher struct {
	s         *Store
	key       string
	prefix    string // key + "/" when recursive
	recursive bool
	pred      storage.SelectionPredicate
	progress  bool   // periodic bookmarks requested
	after     uint64 // deliver only events after this revision
	// shared: the watch takes cacheable.Objects, decoded once per event
	// for all such watchers of the Store (shared.go).
	shared bool

	in       *eventQueue
	result   chan watch.Event
	done     chan struct{}
	stopOnce sync.Once
	// start serves the watch on the calling goroutine (see serve); it is
	// called once, by the first of ResultChan (on a new goroutine) and
	// Stream, unless the watch ends first (release).
	start     func(send func(watch.Event) bool, idle func() bool)
	startOnce sync.Once
	stopOnCtx func() bool // unregisters the end of the watch with its context

	// prefixHandle keeps prefix's canonical copy, whose bytes every
	// watcher of the same prefix shares: writers compare each event's key
	// with the prefix of every watcher under the backend's lock, and with
	// a thousand watchers' own copies each comparison read bytes no cache
	// held (memeqbody under wants, 1.2–1.6% of the server's CPU in a
	// 1,000-watcher row).
	prefixHandle unique.Handle[string]
}

var _ watch.Interface = (*watcher)(nil)

// wants reports whether a change to key concerns the watcher.
func (w *watcher) wants(key string) bool {
	if w.recursive {
		return strings.HasPrefix(key, w.prefix)
	}
	return key == w.key
}

// overflow ends the watch; called with the backend lock held.
func (w *watcher) overflow() { w.end() }

// end closes done: the watch's delivery returns soon; if it was never
// started, it never will be, and the watch is released here (its result
// channel closes, the backend no longer waits for it; the end registered
// on its context stays until that context ends, a no-op then).
//
// A delivery waiting for its next event waits on its queue's token alone
// (see serve): done is closed first, then a token is left, so the wait
// ends and the delivery, which looks at done before every event and
// every wait, returns.
func (w *watcher) end() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.in.signal()
	})
	w.startOnce.Do(func() {
		close(w.result)
		w.s.b.wg.Done()
	})
}

// Stop implements watch.Interface: the result channel closes soon after.
func (w *watcher) Stop() {
	b := w.s.b
	b.mu.Lock()
	delete(b.watchers, w)
	b.mu.Unlock()
	w.end()
}

// ResultChan implements watch.Interface. The first call starts the
// goroutine delivering the events on the channel.
func (w *watcher) ResultChan() <-chan watch.Event {
	w.startOnce.Do(func() {
		go func() {
			defer close(w.result)
			w.start(w.sendResult, nil)
		}()
	})
	return w.result
}

// sendResult hands e to the reader of result; false once the watch ended.
func (w *watcher) sendResult(e watch.Event) bool {
	return storage.SendEvent(w.result, w.done, e)
}

// ExclusiveEventObjects implements handlers.ExclusiveEvents: every event
// object a watcher sends, other than the shared cacheable.Objects, is its
// own (decoded, copied from a seeded decoding, or made, for this watcher
// alone; see serve and deliver) and not read again once sent, so the
// reader may write it: the watch handler's encoder then sets its kind and
// apiVersion in place rather than encoding a deep copy (a copy per event
// per watcher, ~a quarter of the encoding's CPU for the informers' initial
// lists at a server's start).
func (w *watcher) ExclusiveEventObjects() bool { return true }

// Stream delivers the watch's events by calling send on the caller's
// goroutine, in order, until send returns false or the watch ends; idle
// is called whenever no event is waiting and ends the watch if it returns
// false. It saves the hand-over of each event between two goroutines (see
// handlers.eventStreamer). It returns false at once, delivering nothing,
// if ResultChan was called first.
func (w *watcher) Stream(send func(watch.Event) bool, idle func() bool) bool {
	if !storage.ClaimStream(&w.startOnce) {
		return false
	}
	defer close(w.result) // for a ResultChan called meanwhile
	w.start(send, idle)
	return true
}

// Watch implements [storage.Interface].
func (s *Store) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("watch %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	rv, err := storage.ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	sendInitial := rv == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	endBookmark := sendInitial && opts.SendInitialEvents != nil && opts.Predicate.AllowWatchBookmarks
	if sendInitial && rv > 0 {
		// The initial state must be at least as new as rv.
		if err := s.b.waitForRevision(ctx, key, rv); err != nil {
			return nil, err
		}
	}
	w := &watcher{
		s:         s,
		key:       key,
		prefix:    key,
		recursive: opts.Recursive,
		pred:      opts.Predicate,
		progress:  opts.ProgressNotify && opts.Predicate.AllowWatchBookmarks,
		shared:    cacheable.Wanted(ctx),
		in:        newEventQueue(s.b.cfg.WatchBufferSize),
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
	}
	if w.recursive && !strings.HasSuffix(w.prefix, "/") {
		w.prefix += "/"
	}
	w.prefixHandle = unique.Make(w.prefix)
	w.prefix = w.prefixHandle.Value()

	b := s.b
	var initial []kv
	var backlog []*event
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errClosed(key)
	}
	switch {
	case sendInitial:
		w.after = b.rev
		if w.recursive {
			initial = b.rangeLocked(w.prefix, prefixEnd(w.prefix), b.rev)
		} else if st, ok := b.atLocked(key, b.rev); ok {
			initial = []kv{st}
		}
	case rv == 0:
		w.after = b.rev
	default:
		// Events after rv start at rv+1, which must not be compacted.
		if rv+1 < b.compacted {
			cur := b.compacted
			b.mu.Unlock()
			return nil, storage.NewError(storage.ErrCodeExpired, key, int64(rv),
				fmt.Sprintf("%s (compacted at %d)", msgWatchExpired, cur))
		}
		w.after = rv
		if len(b.events) > 0 {
			first := b.events[0].rev
			i := 0
			if rv+1 > first {
				i = int(rv + 1 - first)
			}
			if i < len(b.events) {
				// Published events are immutable and compaction replaces
				// the slice, so this view stays valid without the lock.
				backlog = b.events[i:len(b.events):len(b.events)]
			}
		}
	}
	b.watchers[w] = struct{}{}
	b.wg.Add(1)
	b.mu.Unlock()

	// ctx ending stops the watch as Stop does, so that delivery waits on
	// one channel (done) rather than two: a select's cost grows with its
	// channels, and with many watchers it is paid per event and watcher.
	w.stopOnCtx = context.AfterFunc(ctx, w.end)
	w.start = func(send func(watch.Event) bool, idle func() bool) {
		w.serve(ctx, initial, endBookmark, backlog, send, idle)
	}
	if !storage.StreamedWatch(ctx) {
		w.ResultChan() // delivery starts now; a reader may stream only when it said so
	}
	return w, nil
}

// serve delivers the initial state, the backlog of past events and then
// live events through send until the watch is stopped, cut off, or ctx
// ends (or send or idle returns false). idle, if not nil, is called
// whenever no event is waiting.
func (w *watcher) serve(ctx context.Context, initial []kv, endBookmark bool, backlog []*event, send func(watch.Event) bool, idle func() bool) {
	defer w.s.b.wg.Done()
	defer w.Stop()
	defer w.stopOnCtx()
	for _, st := range initial {
		obj := w.s.newFunc()
		if err := w.s.decode(st.key, st.data, obj, st.rev); err != nil {
			send(errorEvent(err))
			return
		}
		if ok, err := w.pred.Matches(obj); err != nil || !ok {
			continue
		}
		if !send(watch.Event{Type: watch.Added, Object: obj}) {
			return
		}
	}
	if endBookmark {
		obj, err := w.bookmark(w.after)
		if err == nil {
			err = setAnnotation(obj, metav1.InitialEventsAnnotationKey, "true")
		}
		if err != nil {
			send(errorEvent(err))
			return
		}
		if !send(watch.Event{Type: watch.Bookmark, Object: obj}) {
			return
		}
	}
	for _, ev := range backlog {
		if !w.wants(ev.key) {
			continue
		}
		if !w.deliver(ev, send) {
			return
		}
	}
	// The initial state and the backlog are handed over: the watch no
	// longer needs its priority-and-fairness seat (as upstream's watch
	// cache signals after its interval).
	watchinit.Initialized(ctx)
	// A watch with a deadline that wants bookmarks gets one 2 s before the
	// deadline, as kube's watch cache sends it: queued by the timer's
	// goroutine behind the events already queued (a busy watcher skips
	// it, as it skips periodic bookmarks).
	defer storage.BookmarkBeforeDeadline(ctx, w.progress, func() { w.s.b.sendBookmarkTo(w) })()
	// The wait for the next event is a receive on the queue's token alone,
	// not a select that also watches done and the deadline's timer: with
	// many watchers it is paid per event and watcher, and a select locks
	// and queues on every channel it watches. The end of the watch leaves
	// a token after closing done (end), and done is looked at before every
	// event and every wait, so no end is missed.
	for {
		select {
		case <-w.done:
			return
		default:
		}
		if ev, ok := w.in.pop(); ok {
			if !w.deliver(ev, send) {
				return
			}
			continue
		}
		if idle != nil && !idle() {
			return
		}
		<-w.in.ready
	}
}

// deliver converts one stored event into what this watcher sees (nothing,
// ADDED, MODIFIED, DELETED or BOOKMARK) and sends it. It returns false when
// the watch must end.
func (w *watcher) deliver(ev *event, send func(watch.Event) bool) bool {
	if ev.kind == eventBookmark {
		if !w.pred.AllowWatchBookmarks || ev.rev < w.after {
			return true
		}
		obj, err := w.bookmark(ev.rev)
		if err != nil {
			send(errorEvent(err))
			return false
		}
		return send(watch.Event{Type: watch.Bookmark, Object: obj})
	}
	if ev.rev <= w.after {
		return true
	}
	w.after = ev.rev
	var cur, prev runtime.Object
	var curOK, prevOK bool
	var err error
	// The previous object matters for deletions and, with a selector, for
	// transitions. It is sent with the event's revision, as etcd3's watcher.
	wantPrev := ev.prev != nil && (ev.kind == eventDelete || !w.pred.Empty())
	if w.shared {
		// Decoded once for all of the Store's watchers that share.
		if sc, sp, ok := w.s.sharedObjects(ev, wantPrev); ok {
			if sc != nil {
				if curOK, err = w.pred.Matches(sc.obj); err != nil {
					send(errorEvent(fmt.Errorf("watch %q: match %q: %w", w.key, ev.key, err)))
					return false
				}
				cur = sc.wrapped
			}
			if sp != nil {
				if prevOK, err = w.pred.Matches(sp.obj); err != nil {
					send(errorEvent(fmt.Errorf("watch %q: match %q: %w", w.key, ev.key, err)))
					return false
				}
				prev = sp.wrapped
			}
			return w.sendChange(ev, cur, prev, curOK, prevOK, send)
		}
	}
	if ev.kind == eventPut {
		if cur, curOK, err = w.seededOrDecodeMatch(ev); err != nil {
			send(errorEvent(err))
			return false
		}
	}
	if wantPrev {
		if prev, prevOK, err = w.decodeMatch(ev.key, ev.prev.bytes(), ev.rev); err != nil {
			send(errorEvent(err))
			return false
		}
	}
	return w.sendChange(ev, cur, prev, curOK, prevOK, send)
}

// sendChange sends what the watcher sees of a change: cur and prev are the
// new and previous objects (nil if absent or not needed), curOK and prevOK
// whether they match the watcher's predicate.
func (w *watcher) sendChange(ev *event, cur, prev runtime.Object, curOK, prevOK bool, send func(watch.Event) bool) bool {
	switch {
	case ev.kind == eventDelete:
		if prevOK {
			return send(watch.Event{Type: watch.Deleted, Object: prev})
		}
	case ev.prev == nil:
		if curOK {
			return send(watch.Event{Type: watch.Added, Object: cur})
		}
	case w.pred.Empty():
		return send(watch.Event{Type: watch.Modified, Object: cur})
	case curOK && prevOK:
		return send(watch.Event{Type: watch.Modified, Object: cur})
	case curOK:
		return send(watch.Event{Type: watch.Added, Object: cur})
	case prevOK:
		return send(watch.Event{Type: watch.Deleted, Object: prev})
	}
	return true
}

// seededOrDecodeMatch is decodeMatch of a put's new object, copied from the
// event's decoded object when the Store's writer seeded it (a copy of the
// same decoding: see Store.seed).
func (w *watcher) seededOrDecodeMatch(ev *event) (runtime.Object, bool, error) {
	obj := w.s.seededCopy(ev)
	if obj == nil {
		return w.decodeMatch(ev.key, ev.value.bytes(), ev.rev)
	}
	ok, err := w.pred.Matches(obj)
	if err != nil {
		return nil, false, fmt.Errorf("watch %q: match %q: %w", w.key, ev.key, err)
	}
	return obj, ok, nil
}

func (w *watcher) decodeMatch(key string, data []byte, rev uint64) (runtime.Object, bool, error) {
	obj := w.s.newFunc()
	if err := w.s.decode(key, data, obj, rev); err != nil {
		return nil, false, err
	}
	ok, err := w.pred.Matches(obj)
	if err != nil {
		return nil, false, fmt.Errorf("watch %q: match %q: %w", w.key, key, err)
	}
	return obj, ok, nil
}

// bookmark returns an empty object carrying only resourceVersion rev.
func (w *watcher) bookmark(rev uint64) (runtime.Object, error) {
	obj := w.s.newFunc()
	if err := storage.SetObjectResourceVersion(obj, rev); err != nil {
		return nil, fmt.Errorf("bookmark: %w", err)
	}
	return obj, nil
}

func setAnnotation(obj runtime.Object, k, v string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("annotate bookmark: %w", err)
	}
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	m.SetAnnotations(a)
	return nil
}

// errorEvent is the ERROR event that ends a watch after err.
func errorEvent(err error) watch.Event {
	st := apierrors.NewInternalError(err).Status()
	return watch.Event{Type: watch.Error, Object: &st}
}
