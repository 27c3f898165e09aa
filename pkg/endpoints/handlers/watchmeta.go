package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// sharedEncoder is a shared event object (cacheable.Object) that can
// encode itself once for an encoder that only reads it.
type sharedEncoder interface {
	EncodedShared(id runtime.Identifier, encode func(runtime.Object, io.Writer) error) ([]byte, error)
}

// errNoSharedMetadata ends encodeSharedMetadata's encode when the shared
// object has no PartialObjectMetadata form: the caller then transforms
// and encodes the event as before (and reports the error).
var errNoSharedMetadata = errors.New("no shared PartialObjectMetadata form")

// encodeSharedMetadata writes an event whose object is shared by every
// watcher of a watch cache (a cacheable.Object) for a watch that asked
// for PartialObjectMetadata (the metadata informers of controllers, such
// as kapi's own garbage collector, watch every resource so). The
// PartialObjectMetadata is built from the shared object itself, not from a
// deep copy of it: meta.AsPartialObjectMetadata only reads the object (the
// accessors of unstructured objects copy what they return; a typed
// object's ObjectMeta is copied shallowly, and the encoder only reads
// it). The whole event is encoded once per (encoder, event type,
// target) and kept with the shared object, as events without a
// transformation are (sharedEvent), so that every metadata watcher with
// the same encoders writes the same bytes. Upstream encodes the
// transformed object per watcher; the bytes are the same.
//
// It reports false when the event is not such an event (another
// transformation, an object that cannot be encoded without a copy, or one
// without PartialObjectMetadata form): the caller encodes it.
//
// A watchEncoder's target is fixed, so e.sharedEvents hold either the
// untransformed encodings (target nil, sharedEvent) or these.
func (e *watchEncoder) encodeSharedMetadata(t watch.EventType, obj runtime.Object) (bool, error) {
	if e.target == nil || e.target.Kind != "PartialObjectMetadata" {
		return false, nil
	}
	shared, ok := obj.(sharedEncoder)
	if !ok {
		return false, nil
	}
	se := e.sharedMetadataEvent(t)
	raw, err := shared.EncodedShared(se.id, se.encode)
	if errors.Is(err, errNoSharedMetadata) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if _, err := e.out.Write(raw); err != nil {
		return true, err
	}
	e.sent.Sent(len(raw))
	return true, nil
}

// sharedMetadataEvent is sharedEvent for PartialObjectMetadata events.
func (e *watchEncoder) sharedMetadataEvent(t watch.EventType) *sharedEventEncoding {
	for i := range e.sharedEvents {
		if e.sharedEvents[i].typ == t {
			return &e.sharedEvents[i]
		}
	}
	gv := e.target.GroupVersion()
	id, handle := sharedID(string(e.objID) + ";as=" + e.target.String() +
		";event=" + string(e.eventEncoder.Identifier()) + ";type=" + string(t))
	e.sharedEvents = append(e.sharedEvents, sharedEventEncoding{
		typ:    t,
		id:     id,
		handle: handle,
		encode: func(obj runtime.Object, w io.Writer) error {
			partial, err := asPartialObjectMetadata(obj, gv)
			if err != nil {
				return fmt.Errorf("%w: %w", errNoSharedMetadata, err)
			}
			var objBuf bytes.Buffer
			if err := e.objEncoder.Encode(partial, &objBuf); err != nil {
				return fmt.Errorf("unable to encode watch object %T: %w", partial, err)
			}
			return e.encodeEvent(t, objBuf.Bytes(), w)
		},
	})
	return &e.sharedEvents[len(e.sharedEvents)-1]
}
