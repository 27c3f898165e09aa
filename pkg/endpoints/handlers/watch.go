package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
	"unique"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// watchTimeout is how long a watch lasts: timeoutSeconds when given, else
// MinRequestTimeout × (1 + rand[0,1)) (lifecycle.md 32); 0 means no limit.
func (s *RequestScope) watchTimeout(opts *metainternalversion.ListOptions) time.Duration {
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		return time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	if s.MinRequestTimeout > 0 {
		return time.Duration(float64(s.MinRequestTimeout) * (rand.Float64() + 1))
	}
	return 0
}

// serveWatch starts a watch and streams its events until the watch ends,
// the timeout passes or the request context is done (client gone, or the
// server ending watches at shutdown: filters.WatchTerminated). Errors
// returned happen before anything is written.
//
// Frames: JSON WatchEvent objects one after another (Content-Type
// application/json, as upstream), or length-delimited protobuf
// (application/vnd.kubernetes.protobuf;stream=watch). Each event's object
// is transformed as negotiated (Table rows without headers after the first
// event, PartialObjectMetadata); ERROR events carry a Status.
func (s *RequestScope) serveWatch(ctx context.Context, w http.ResponseWriter, req *http.Request, watcher rest.Watcher, opts *metainternalversion.ListOptions, o mediaTypeOptions) error {
	tableOpts, err := s.tableOptionsFor(o, req)
	if err != nil {
		return err
	}
	so, err := negotiateOutputStream(req, s.Serializer, s)
	if err != nil {
		return err
	}
	stream := so.accepted
	framer := stream.StreamSerializer.Framer
	if framer == nil {
		return fmt.Errorf("no framer defined for %q available for embedded encoding", stream.MediaType)
	}
	mediaType := stream.MediaType
	if mediaType != mediaTypeJSON {
		mediaType += ";stream=watch"
	}
	eventEncoder := s.Serializer.EncoderForVersion(stream.StreamSerializer.Serializer, s.Kind.GroupVersion())

	var objEncoder runtime.Encoder
	target := o.convert
	if target != nil && isMetaGV(target.GroupVersion()) && (target.Kind == "Table" || target.Kind == "PartialObjectMetadata" || target.Kind == "PartialObjectMetadataList") {
		info, ok := runtime.SerializerInfoForMediaType(metaCodecs.SupportedMediaTypes(), stream.MediaType)
		if !ok {
			return fmt.Errorf("no encoder for %q exists in the requested target", stream.MediaType)
		}
		objEncoder = metaCodecs.EncoderForVersion(info.Serializer, target.GroupVersion())
	} else {
		target = nil
		objEncoder = s.Serializer.EncoderForVersion(stream.Serializer, s.Kind.GroupVersion())
	}

	timeout := s.watchTimeout(opts)
	wctx, cancel := context.WithCancel(ctx)
	if timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	// The events are read by Stream where the watch can (eventStreamer).
	watchCtx := storage.WithStreamedWatch(wctx)
	if s.SharedWatchObjects {
		watchCtx = cacheable.WithObjects(watchCtx)
	}
	wi, err := watcher.Watch(watchCtx, opts)
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return err
		}
		// A start older than what storage keeps is answered as
		// kube-apiserver answers it, from its watch cache as from etcd:
		// 200 and one ERROR event with the 410 Status (k8s.io/apiserver
		// v0.37 cacher.Watch: "once we have passed authn/authz/admission,
		// and successfully parsed a resource version, other errors must
		// fail with a watch event of type ERROR").
		wi = errorWatch(errorToStatus(err, s.logger()))
	}
	defer wi.Stop()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		s.logger().Debug("flush watch headers", "err", err)
		return nil
	}

	e := &watchEncoder{
		scope:        s,
		ctx:          wctx,
		target:       target,
		tableOpts:    tableOpts,
		objEncoder:   objEncoder,
		objID:        runtime.Identifier(string(objEncoder.Identifier()) + ";" + s.Kind.GroupVersion().String()),
		eventEncoder: eventEncoder,
		out:          framer.NewFrameWriter(w),
		sent:         s.Metrics.WatchEvents(s.Kind),
		req:          req,
	}
	if x, ok := wi.(ExclusiveEvents); ok {
		e.exclusive = x.ExclusiveEventObjects()
	}
	if st, ok := wi.(eventStreamer); ok && e.stream(st, rc) {
		return nil
	}
	ch := wi.ResultChan()
	for {
		select {
		case <-wctx.Done():
			// Timeout, client gone, or the server terminating watches
			// (filters.WatchTerminated): end the response cleanly.
			return nil
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			// Write this event and those already waiting behind it, then
			// flush once (upstream flushes when its channel is empty): a
			// watcher that fell behind catches up in few large writes
			// rather than a frame and a flush per event.
			for n := 0; ok; n++ {
				if err := e.encode(ev); err != nil {
					s.logger().Debug("watch stream ended", "err", err)
					return nil
				}
				if n == maxWatchBatch {
					break
				}
				select {
				case ev, ok = <-ch:
				default:
					ok = false
				}
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
			e.flushed()
		}
	}
}

// maxWatchBatch bounds the events written between two flushes, so the
// first of a long run is not held back.
const maxWatchBatch = 64

// eventStreamer is a watch that can deliver its events by calling its
// reader back on the reader's goroutine (the watch cache's watchers do):
// send gets each event in order, idle is called whenever none is waiting;
// either returning false ends the watch. Stream returns when the watch is
// over, or false at once if it cannot stream (the events then come on
// ResultChan).
type eventStreamer interface {
	Stream(send func(watch.Event) bool, idle func() bool) bool
}

// stream writes the events of st as serveWatch's loop writes those of a
// result channel: each event framed as it comes, one flush when none is
// waiting or after maxWatchBatch events. It saves waking a second
// goroutine per event. false: st could not stream, nothing was written.
func (e *watchEncoder) stream(st eventStreamer, rc *http.ResponseController) bool {
	unflushed := 0
	flush := func() bool {
		if unflushed == 0 {
			return true
		}
		unflushed = 0
		if rc.Flush() != nil {
			return false
		}
		e.flushed()
		return true
	}
	if !st.Stream(func(ev watch.Event) bool {
		if err := e.encode(ev); err != nil {
			e.scope.logger().Debug("watch stream ended", "err", err)
			return false
		}
		unflushed++
		if unflushed == maxWatchBatch {
			return flush()
		}
		return true
	}, flush) {
		return false
	}
	flush()
	return true
}

// ExclusiveEvents is a watch whose events' objects (other than
// runtime.CacheableObjects) are its own when ExclusiveEventObjects says
// so: each made for this watch alone and not read by the storage once
// sent, as the memory storage decodes a stored object for each of its
// watchers. The watch's encoder then writes an object's kind and
// apiVersion into the object itself, rather than into a copy (a watch
// cache shares one event object between all its watchers, and encoding
// writes them). Wrappers of a watch (filters, decorators) do not have the
// method unless they keep the promise.
type ExclusiveEvents interface {
	ExclusiveEventObjects() bool
}

// watchEncoder writes watch events.
type watchEncoder struct {
	scope      *RequestScope
	ctx        context.Context
	target     *schema.GroupVersionKind
	tableOpts  *metav1.TableOptions
	objEncoder runtime.Encoder
	// objID names objEncoder's output for shared objects' caches;
	// sharedEvents, built on first use, say how a whole event of each
	// type is encoded for those caches.
	objID        runtime.Identifier
	sharedEvents []sharedEventEncoding
	eventEncoder runtime.Encoder
	out          io.Writer
	// exclusive: the watch's plain event objects are the encoder's to
	// write (see ExclusiveEvents).
	exclusive  bool
	obj, event bytes.Buffer
	counted    countingWriter
	// sent counts the events written (apiserver_watch_events_total and
	// _sizes, labelled with the kind served).
	sent metrics.WatchEventRecorder
	// req is the watch request; initialEventsEnd is set once the BOOKMARK
	// ending a watch list's initial events is written, until flushed.
	req              *http.Request
	initialEventsEnd bool
}

// flushed records, once the BOOKMARK that ends a watch list's initial
// events is out, the time since the request was received in
// apiserver_watch_list_duration_seconds (upstream's
// RecordWatchListLatency, after the event's write and flush).
func (e *watchEncoder) flushed() {
	if !e.initialEventsEnd {
		return
	}
	e.initialEventsEnd = false
	ctx := e.req.Context()
	received, ok := request.ReceivedTimestampFrom(ctx)
	if !ok {
		return
	}
	info, _ := request.RequestInfoFrom(ctx)
	e.scope.Metrics.WatchListLatency(e.scope.Resource, metrics.Scope(info), time.Since(received))
}

// isInitialEventsEnd reports whether ev is the BOOKMARK annotated
// k8s.io/initial-events-end.
func isInitialEventsEnd(ev watch.Event) bool {
	if ev.Type != watch.Bookmark || ev.Object == nil {
		return false
	}
	obj := ev.Object
	if c, ok := obj.(runtime.CacheableObject); ok {
		obj = c.GetObject()
	}
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// sharedEventEncoding is how an encoder encodes a whole event of one
// type around a shared object: id names the result in the object's cache
// (objEncoder's object in eventEncoder's WatchEvent of that type), encode
// produces it. Built once per type and encoder, not per event: a watcher
// writes every event of a fan-out, and a map lookup keyed by the long id
// and a closure per event showed in its profile.
type sharedEventEncoding struct {
	typ watch.EventType
	// id is the canonical copy of its text (see sharedID), which handle
	// keeps alive.
	id     runtime.Identifier
	handle unique.Handle[runtime.Identifier]
	encode func(runtime.Object, io.Writer) error
}

// sharedID returns id's canonical copy, the same string data for every
// encoder that makes an equal id, and the handle that keeps it. A shared
// object's cache compares each lookup's id with the ids kept: the
// encoders of a thousand watchers each build their own id, and with
// their own bytes every delivery compared two ~150-byte strings byte by
// byte (memeqbody, 1.6% of the server's CPU with 1,000 watchers); equal
// data pointers compare in one step.
func sharedID(id string) (runtime.Identifier, unique.Handle[runtime.Identifier]) {
	h := unique.Make(runtime.Identifier(id))
	return h.Value(), h
}

// sharedEvent returns this encoder's sharedEventEncoding for type t.
func (e *watchEncoder) sharedEvent(t watch.EventType) *sharedEventEncoding {
	for i := range e.sharedEvents {
		if e.sharedEvents[i].typ == t {
			return &e.sharedEvents[i]
		}
	}
	id, handle := sharedID(string(e.objID) + ";event=" + string(e.eventEncoder.Identifier()) + ";type=" + string(t))
	e.sharedEvents = append(e.sharedEvents, sharedEventEncoding{
		typ:    t,
		id:     id,
		handle: handle,
		encode: func(obj runtime.Object, w io.Writer) error {
			var objBuf bytes.Buffer
			if err := e.objEncoder.Encode(obj, &objBuf); err != nil {
				return fmt.Errorf("unable to encode watch object %T: %w", obj, err)
			}
			return e.encodeEvent(t, objBuf.Bytes(), w)
		},
	})
	return &e.sharedEvents[len(e.sharedEvents)-1]
}

func (e *watchEncoder) encode(ev watch.Event) error {
	if ev.Type == watch.Bookmark && e.scope.Metrics != nil && isInitialEventsEnd(ev) {
		e.initialEventsEnd = true
	}
	obj := ev.Object
	shared, isShared := obj.(runtime.CacheableObject)
	if isShared && e.target == nil {
		// The whole event is encoded once for every watcher with the same
		// encoders (as upstream's watch encoder caches it) and written
		// in one piece: one frame. Its object is the shared object's
		// copy (see cacheable), encoded only inside the event.
		e.counted = countingWriter{w: e.out}
		se := e.sharedEvent(ev.Type)
		if err := shared.CacheEncode(se.id, se.encode, &e.counted); err != nil {
			return err
		}
		e.sent.Sent(e.counted.n)
		return nil
	}
	if isShared {
		if done, err := e.encodeSharedMetadata(ev.Type, obj); done {
			return err
		}
		obj = shared.GetObject()
	}
	e.obj.Reset()
	e.event.Reset()
	if e.target != nil && obj != nil {
		t, err := e.scope.transformObject(e.ctx, obj, e.tableOpts, e.target)
		if err != nil {
			e.scope.logger().Error("failed to transform watch object", "type", fmt.Sprintf("%T", obj), "err", err)
		} else {
			obj = t
		}
		// Table headers only on the first event.
		if e.tableOpts != nil && !e.tableOpts.NoHeaders {
			opts := *e.tableOpts
			opts.NoHeaders = true
			e.tableOpts = &opts
		}
	}
	if obj != nil {
		if obj == ev.Object && !e.exclusive {
			// Watch caches share one event object between all watchers,
			// and encoding writes the object's kind and apiVersion: encode
			// a copy.
			obj = obj.DeepCopyObject()
		}
		if err := e.objEncoder.Encode(obj, &e.obj); err != nil {
			return fmt.Errorf("unable to encode watch object %T: %w", obj, err)
		}
	}
	if err := e.encodeEvent(ev.Type, e.obj.Bytes(), &e.event); err != nil {
		return err
	}
	if _, err := e.out.Write(e.event.Bytes()); err != nil {
		return err
	}
	e.sent.Sent(e.event.Len())
	return nil
}

// encodeEvent writes the WatchEvent of type t around the encoded object raw.
func (e *watchEncoder) encodeEvent(t watch.EventType, raw []byte, w io.Writer) error {
	out := &metav1.WatchEvent{Type: string(t), Object: runtime.RawExtension{Raw: raw}}
	if err := e.eventEncoder.Encode(out, w); err != nil {
		return fmt.Errorf("unable to encode watch event: %w", err)
	}
	return nil
}

// errorWatch is a watch whose only event is an ERROR with st.
func errorWatch(st *metav1.Status) watch.Interface {
	ch := make(chan watch.Event, 1)
	ch <- watch.Event{Type: watch.Error, Object: st}
	close(ch)
	return watch.NewProxyWatcher(ch)
}
