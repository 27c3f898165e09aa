package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
)

const (
	// resultBuffer is the number of events a watcher holds for a slow
	// consumer before it stops reading from etcd (etcd's client then
	// buffers for this watch alone: other watchers are not slowed down).
	resultBuffer = 100
	// syncPageSize is the page size of the initial listing of a watch.
	syncPageSize = 10000
)

// watcher is one Watch: a loop reading etcd's watch stream, turning its
// events into watch.Events for the predicate, and sending them on result
// (from a goroutine of its own, which closes result when it ends) or to
// a reader's callback on the reader's goroutine (Stream).
type watcher struct {
	s         *Store
	key       string // caller's key, for errors
	etcdKey   string // with a trailing "/" when recursive
	recursive bool
	pred      storage.SelectionPredicate
	// progressNotify asks etcd for progress notifications; bookmarks are
	// sent only when the predicate allows them.
	progressNotify bool
	bookmarks      bool

	result chan watch.Event
	cancel context.CancelFunc
	done   chan struct{}
	// stopped is the watch context's Done: the watch is ending.
	stopped <-chan struct{}

	// start runs the watch's loop on the calling goroutine, delivering
	// through emit (idle, if not nil, is called when no etcd response is
	// waiting); it is called once, by the first of ResultChan (on a new
	// goroutine), Stream and Stop (which only releases the watch).
	start     func(emit func(watch.Event) bool, idle func() bool)
	startOnce sync.Once
	// emit delivers one event; set before the loop runs.
	emit func(watch.Event) bool
	idle func() bool
	// receivedAt is when the etcd response whose events the loop is
	// delivering arrived (see ReceivedAt); the loop's only.
	receivedAt time.Time
}

// ReceivedAt is when the watch received from etcd the event it is
// delivering, before decoding it: the watch cache reads it from inside
// Stream's send, on the loop's goroutine, for its dispatch latency
// histogram (upstream's etcd3 watcher stamps its events so for its watch
// cache). Elsewhere its value is undefined.
func (w *watcher) ReceivedAt() time.Time { return w.receivedAt }

// Watch implements [storage.Interface].
//
// As kube's etcd3 store: RV "" or "0" lists the current state as ADDED
// events (at revision R) and then watches from R+1; RV N watches from N+1.
// SendInitialEvents=true lists the current state (after checking N is not
// in the future) and, with Predicate.AllowWatchBookmarks, ends it with an
// annotated BOOKMARK;
// SendInitialEvents=false with RV "" or "0" starts at the current revision
// without initial events.
func (s *Store) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	k, err := s.prepareKey(key)
	if err != nil {
		return nil, err
	}
	if opts.Recursive && !strings.HasSuffix(k, "/") {
		k += "/"
	}
	rev, err := storage.ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if s.newFunc == nil {
		return nil, errors.New("etcd3: watch needs Config.NewFunc")
	}
	var initialEvents, endBookmark bool
	switch {
	case opts.SendInitialEvents == nil:
		initialEvents = rev == 0
	case *opts.SendInitialEvents:
		// As kube: the end of the initial events is marked only for
		// watches that accept bookmarks.
		initialEvents, endBookmark = true, opts.Predicate.AllowWatchBookmarks
	}
	if initialEvents && rev > 0 {
		cur, err := s.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		if rev > cur {
			return nil, tooLargeRV(key, rev, cur)
		}
	}
	if !initialEvents && rev == 0 {
		cur, err := s.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		rev = cur
	}

	w, wctx := s.newWatcher(ctx, key, k, opts)
	w.start = func(emit func(watch.Event) bool, idle func() bool) {
		w.emit, w.idle = emit, idle
		w.run(wctx, int64(rev), initialEvents, endBookmark, nil, 0)
	}
	if !storage.StreamedWatch(ctx) {
		w.ResultChan() // the loop starts now, as it always did
	}
	// As upstream's etcd3 watcher: whether an etcd watch has caught up is
	// not known cheaply, so it counts as initialized once set up (the
	// watch cache serves nearly every watch and signals after its
	// initial events).
	watchinit.Initialized(ctx)
	return w, nil
}

// WatchFromCurrent starts a watch of key at the store's current revision and
// returns once etcd has registered it, with the revision rev it starts
// after: the watch delivers exactly the changes after rev (as Watch from
// resourceVersion rev would, for opts' Recursive, Predicate and
// ProgressNotify; opts.ResourceVersion and SendInitialEvents are ignored).
// Any read made after it returns (a linearizable list) is at rev or later.
//
// Unlike Watch from an explicit revision, the etcd watch is created "from
// now" (no start revision), which etcd registers as synced at once: a watch
// from a revision older than etcd's current one is caught up only by etcd's
// sync loop, every 100 ms (watchResyncPeriod in etcd's mvcc package), and
// until then etcd answers no progress request of its gRPC stream. The watch
// cache starts its watch this way, before its initial list (see the
// cacher's listAndWatch), so that its first consistent reads do not wait
// for that loop. rev is the revision etcd reported when it created the
// watch, which is at or after the revision the watch really starts from:
// the few changes in between (writes racing the creation) are dropped here,
// so the watch is exactly "after rev" (and resuming after a reconnect, which
// etcd's client does from rev, repeats none of them).
func (s *Store) WatchFromCurrent(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, uint64, error) {
	k, err := s.prepareKey(key)
	if err != nil {
		return nil, 0, err
	}
	if opts.Recursive && !strings.HasSuffix(k, "/") {
		k += "/"
	}
	if s.newFunc == nil {
		return nil, 0, errors.New("etcd3: watch needs Config.NewFunc")
	}
	w, wctx := s.newWatcher(ctx, key, k, opts)
	wch := s.client.Watch(wctx, k, w.etcdOptions(clientv3.WithCreatedNotify())...)
	rev, err := awaitCreated(wctx, wch)
	if err != nil {
		w.Stop()
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, interpretError(err, key)
	}
	w.start = func(emit func(watch.Event) bool, idle func() bool) {
		w.emit, w.idle = emit, idle
		w.run(wctx, rev, false, false, wch, rev)
	}
	if !storage.StreamedWatch(ctx) {
		w.ResultChan()
	}
	watchinit.Initialized(ctx)
	return w, uint64(rev), nil
}

// newWatcher returns a watcher of etcd key k (the storage key key) for opts,
// not yet watching, and the context its etcd watch runs under (ended by
// Stop).
func (s *Store) newWatcher(ctx context.Context, key, k string, opts storage.ListOptions) (*watcher, context.Context) {
	wctx, cancel := context.WithCancel(s.watchContext(ctx))
	return &watcher{
		s:              s,
		key:            key,
		etcdKey:        k,
		recursive:      opts.Recursive,
		pred:           opts.Predicate,
		progressNotify: opts.ProgressNotify,
		bookmarks:      opts.ProgressNotify && opts.Predicate.AllowWatchBookmarks,
		result:         make(chan watch.Event, resultBuffer),
		cancel:         cancel,
		done:           make(chan struct{}),
		stopped:        wctx.Done(),
	}, wctx
}

// etcdOptions are the options of the watcher's etcd watch: start (a
// revision, or the creation notice) and what every watch of it asks for.
func (w *watcher) etcdOptions(start clientv3.OpOption) []clientv3.OpOption {
	opts := []clientv3.OpOption{start, clientv3.WithPrevKV()}
	if w.recursive {
		opts = append(opts, clientv3.WithPrefix())
	}
	if w.progressNotify {
		opts = append(opts, clientv3.WithProgressNotify())
	}
	return opts
}

// awaitCreated reads etcd's "created" response of a watch made with
// WithCreatedNotify (always its first) and returns its header's revision.
func awaitCreated(ctx context.Context, wch clientv3.WatchChan) (int64, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case resp, ok := <-wch:
		switch {
		case !ok:
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			return 0, errors.New("etcd watch closed before it was created")
		case resp.Err() != nil:
			return 0, resp.Err()
		case !resp.Created:
			return 0, fmt.Errorf("etcd watch: first response is not the creation (revision %d, %d events)", resp.Header.Revision, len(resp.Events))
		}
		return resp.Header.Revision, nil
	}
}

// watchStreamKey is the gRPC metadata key that gives every Store its own
// etcd watch stream (etcd ignores metadata it does not know).
const watchStreamKey = "kapi-watch-stream"

// watchContext is the context of every etcd watch of a Store, and of its
// progress requests. It requires a leader (a partitioned member must not keep
// a watch open that never delivers) and carries exactly that gRPC metadata
// plus the Store's stream key, whatever ctx carried: clientv3 groups watches
// into gRPC streams by their outgoing metadata, and RequestProgress reaches
// only the watches of the stream its own context selects, once all of them
// are synced. One stream per resource keeps a consistent read of one
// resource from costing a progress notification to the watch of every other
// resource, and from waiting for the slowest of them: with 300 CRDs on one
// shared stream, a list after a restart waited seconds. kube-apiserver gets
// the same separation from its etcd client per resource.
func (s *Store) watchContext(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(
		rpctypes.MetadataRequireLeaderKey, rpctypes.MetadataHasLeader,
		watchStreamKey, s.streamKey))
}

// RequestWatchProgress implements the cacher's ProgressRequester with
// etcd's RequestProgress: once every watch of the store's gRPC watch stream
// is synced, etcd sends each of them a progress notification at its current
// revision, which watches with ProgressNotify and
// Predicate.AllowWatchBookmarks deliver as a BOOKMARK. The request goes to
// this Store's own stream (see watchContext). It only queues the request;
// it does not wait for the notification.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	if err := s.client.RequestProgress(s.watchContext(ctx)); err != nil {
		return interpretError(err, "")
	}
	return nil
}

// MarksRevisionEnds implements the cacher's RevisionEndMarker: a watch
// with ProgressNotify and Predicate.AllowWatchBookmarks sends a BOOKMARK at
// the revision of the last event of each etcd watch response, right after
// it. etcd never splits a revision's events across responses (its watch
// batches whole revisions; kapi does not ask for fragmented responses), so
// the bookmark follows the last event of every revision.
func (s *Store) MarksRevisionEnds() bool { return true }

// ResultChan implements watch.Interface. The first call starts the
// goroutine delivering the events on the channel (a watch whose context
// was not marked by storage.WithStreamedWatch started it in Watch).
func (w *watcher) ResultChan() <-chan watch.Event {
	w.startOnce.Do(func() {
		go w.start(w.sendResult, nil)
	})
	return w.result
}

// sendResult hands ev to the reader of result; false once the watch's
// context ended.
func (w *watcher) sendResult(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	default:
	}
	select {
	case w.result <- ev:
		return true
	case <-w.stopped:
		return false
	}
}

// Stream delivers the watch's events by calling send on the caller's
// goroutine, in order, until send returns false or the watch ends (Stop,
// its context, an error event); idle, if not nil, is called whenever no
// etcd response is waiting and ends the watch if it returns false. The
// watch is over when Stream returns. It saves the hand-over of every
// event from the watch's goroutine to its reader's: the watch cache's
// reflector reads its etcd watch this way, so an event reaches the
// cache's watchers one goroutine wake-up sooner (with 1,000 watchers
// each wake-up waits behind a run queue of their handlers). It returns
// false at once, delivering nothing, if ResultChan was called first.
func (w *watcher) Stream(send func(watch.Event) bool, idle func() bool) bool {
	if !storage.ClaimStream(&w.startOnce) {
		return false
	}
	w.start(send, idle)
	return true
}

// Stop implements watch.Interface: it ends the watch and waits until its
// loop has returned (ResultChan is then closed). A watch never started is
// released. While Stream runs, Stop waits for the send in progress to
// return, so it must not be called from inside send.
func (w *watcher) Stop() {
	w.cancel()
	w.startOnce.Do(func() {
		close(w.result)
		close(w.done)
	})
	<-w.done
}

// run reads the etcd watch until ctx ends or it fails. With wch nil it
// first sends the initial events if asked, then watches from rev+1; with
// wch not nil (a watch WatchFromCurrent created after revision rev) it reads
// wch and drops changes at or before floor (writes racing the creation).
func (w *watcher) run(ctx context.Context, rev int64, initialEvents, endBookmark bool, wch clientv3.WatchChan, floor int64) {
	defer close(w.done)
	defer close(w.result)
	defer w.cancel()

	if wch == nil {
		if initialEvents {
			r, err := w.sync(ctx)
			if err != nil {
				w.sendError(ctx, err)
				return
			}
			rev = r
		}
		if endBookmark {
			if !w.sendBookmark(ctx, rev, true) {
				return
			}
		}
		wch = w.s.client.Watch(ctx, w.etcdKey, w.etcdOptions(clientv3.WithRev(rev+1))...)
	}
	// lastRev is the revision up to which every event was delivered; heard
	// is whether etcd said anything since the last tick.
	lastRev, heard := rev, false
	var tick <-chan time.Time
	if w.bookmarks {
		t := time.NewTicker(w.s.progress)
		defer t.Stop()
		tick = t.C
	}
	for {
		var resp clientv3.WatchResponse
		var ok, got bool
		if w.idle != nil {
			// A streaming reader flushes when nothing is waiting.
			select {
			case resp, ok = <-wch:
				got = true
			default:
				if !w.idle() {
					return
				}
			}
		}
		if !got {
			select {
			case <-tick:
				if !heard && !w.sendBookmark(ctx, lastRev, false) {
					return
				}
				heard = false
				continue
			case resp, ok = <-wch:
			}
		}
		if !ok {
			// Without an error the stream ends only when ctx ends or the
			// client is closed: either way the watch is over.
			return
		}
		heard = true
		if err := resp.Err(); err != nil {
			w.sendError(ctx, err)
			return
		}
		if resp.IsProgressNotify() {
			w.s.metrics.EtcdBookmark()
			lastRev = max(lastRev, resp.Header.Revision)
			if w.bookmarks && !w.sendBookmark(ctx, lastRev, false) {
				return
			}
			continue
		}
		w.receivedAt = time.Now()
		est := w.s.sizes.Load()
		for _, e := range resp.Events {
			w.s.metrics.EtcdEvent()
			if est != nil {
				// Every event, as upstream's watcher (before the floor and
				// the predicate).
				if e.Type == clientv3.EventTypeDelete {
					est.forget(w.s.pathPrefix, e.Kv)
				} else {
					est.observeOne(w.s.pathPrefix, e.Kv)
				}
			}
			if e.Kv.ModRevision <= floor {
				continue
			}
			lastRev = max(lastRev, e.Kv.ModRevision)
			ev, ok, err := w.transform(e)
			if err != nil {
				w.sendError(ctx, err)
				return
			}
			if ok && !w.send(ctx, ev) {
				return
			}
		}
		// etcd sends a revision's events (a transaction's: many keys at
		// one revision) in one response: a BOOKMARK at the last one tells
		// a watch cache the revision is complete (see MarksRevisionEnds).
		if w.bookmarks && len(resp.Events) > 0 && !w.sendBookmark(ctx, lastRev, false) {
			return
		}
	}
}

// sync sends the current state as ADDED events and returns the revision it
// was read at.
//
// Its etcd requests are recorded as upstream's watcher records them: one
// key, a "get"; a recursive watch's pages, one "listStream" from the first
// read to the last page's events (upstream reads them as one range stream
// and queues each chunk's events as it comes), failed if a read failed.
func (w *watcher) sync(ctx context.Context) (int64, error) {
	opts := w.s.readOpts()
	if w.recursive {
		opts = append(opts, clientv3.WithRange(clientv3.GetPrefixRangeEnd(w.etcdKey)), clientv3.WithLimit(syncPageSize))
	}
	from := w.etcdKey
	var rev int64
	var streamErr error
	if w.recursive {
		defer func(start time.Time) {
			w.s.metrics.EtcdRequest(storagemetrics.OpListStream, start, streamErr)
		}(time.Now())
	}
	for {
		start := time.Now()
		resp, err := w.s.client.Get(ctx, from, opts...)
		if w.recursive {
			streamErr = err
		} else {
			w.s.metrics.EtcdRequest(storagemetrics.OpGet, start, err)
		}
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
			opts = append(opts, clientv3.WithRev(rev))
		}
		if est := w.s.sizes.Load(); est != nil {
			est.observe(w.s.pathPrefix, resp.Kvs)
		}
		for _, kv := range resp.Kvs {
			obj, err := w.s.decodeNew(w.key, kv.Value, w.s.newFunc, kv.ModRevision)
			if err != nil {
				return 0, err
			}
			if !w.matches(obj) {
				continue
			}
			if !w.send(ctx, watch.Event{Type: watch.Added, Object: obj}) {
				return 0, ctx.Err()
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// transform turns an etcd event into the watch event the predicate sees,
// if any: objects entering the predicate are ADDED, leaving it DELETED (with
// the old object). Old objects carry the event's revision, as in kube.
func (w *watcher) transform(e *clientv3.Event) (watch.Event, bool, error) {
	rev := e.Kv.ModRevision
	if e.Type == clientv3.EventTypeDelete {
		if e.PrevKv == nil {
			return watch.Event{}, false, fmt.Errorf("etcd delete event for %q at revision %d without the previous value", e.Kv.Key, rev)
		}
		old, err := w.s.decodeNew(w.key, e.PrevKv.Value, w.s.newFunc, rev)
		if err != nil {
			return watch.Event{}, false, err
		}
		return watch.Event{Type: watch.Deleted, Object: old}, w.matches(old), nil
	}

	cur, err := w.s.decodeNew(w.key, e.Kv.Value, w.s.newFunc, rev)
	if err != nil {
		return watch.Event{}, false, err
	}
	if e.IsCreate() {
		return watch.Event{Type: watch.Added, Object: cur}, w.matches(cur), nil
	}
	if w.pred.Empty() {
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	}
	curOK := w.matches(cur)
	if e.PrevKv == nil {
		// History of the previous value is gone: the best guess.
		return watch.Event{Type: watch.Modified, Object: cur}, curOK, nil
	}
	old, err := w.s.decodeNew(w.key, e.PrevKv.Value, w.s.newFunc, rev)
	if err != nil {
		return watch.Event{}, false, err
	}
	oldOK := w.matches(old)
	switch {
	case curOK && oldOK:
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	case curOK:
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	case oldOK:
		return watch.Event{Type: watch.Deleted, Object: old}, true, nil
	}
	return watch.Event{}, false, nil
}

func (w *watcher) matches(obj runtime.Object) bool {
	ok, err := w.pred.Matches(obj)
	return err == nil && ok
}

// send delivers ev unless the watch ends first.
func (w *watcher) send(ctx context.Context, ev watch.Event) bool {
	if ctx.Err() != nil {
		return false
	}
	return w.emit(ev)
}

// sendBookmark sends a BOOKMARK at rev, annotated as the end of the initial
// events when initialEnd.
func (w *watcher) sendBookmark(ctx context.Context, rev int64, initialEnd bool) bool {
	obj := w.s.newFunc()
	if err := storage.SetObjectResourceVersion(obj, uint64(rev)); err != nil {
		w.sendError(ctx, err)
		return false
	}
	if initialEnd {
		m, err := meta.Accessor(obj)
		if err != nil {
			w.sendError(ctx, err)
			return false
		}
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return w.send(ctx, watch.Event{Type: watch.Bookmark, Object: obj})
}

// sendError ends the watch with an ERROR event carrying a Status, as kube:
// 410 Expired when the revision was compacted, 500 otherwise. Nothing is
// sent once the watch was stopped.
func (w *watcher) sendError(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	err = interpretError(err, w.key)
	var st metav1.Status
	if storage.HasCode(err, storage.ErrCodeExpired) {
		st = apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old.").Status()
	} else {
		w.s.logger.Warn("watch failed", "key", w.key, "err", err)
		st = apierrors.NewInternalError(err).Status()
	}
	w.send(ctx, watch.Event{Type: watch.Error, Object: &st})
}
