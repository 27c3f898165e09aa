package handlers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// A list served from the watch cache is written from its items' cached
// encodings: the storage hands the handler the cache entries' shared
// objects (cacheable.WithItems) instead of deep copies, and the response is
// the list's own encoding with no items, with each item's bytes (encoded
// once per entry and encoder, kept with the entry) written in place of the
// empty items array. The bytes are those the encoder writes for the whole
// list: an item's bytes are cut out of the encoding of a list holding that
// item alone, and a list whose encoding cannot be cut that way is encoded
// whole, as before.
//
// Only plain JSON lists take this path (no Table or PartialObjectMetadata
// transformation, no pretty printing, no YAML or protobuf), and only when
// the request's audit event does not record the response object.

// jsonItemsMarker is how the JSON encoders write an empty items array
// (after meta.SetList(list, []runtime.Object{})). Outside a string it can
// only be the array itself; inside one, its quotes would be escaped.
var jsonItemsMarker = []byte(`"items":[]`)

// errNoSharedList: the list cannot be written from cached items; it is
// encoded whole instead.
var errNoSharedList = errors.New("list not writable from cached items")

// sharedListWanted tells whether a list request may take the shared items
// of a watch cache (see above); decided before the storage is read.
func (s *RequestScope) sharedListWanted(ctx context.Context, req *http.Request, o mediaTypeOptions) bool {
	return s.SharedListObjects && o.convert == nil && !o.pretty && !isPrettyPrint(req) &&
		o.accepted.MediaType == mediaTypeJSON && !audit.ResponseObjectWanted(ctx)
}

// writeList writes a list read with items (cacheable.WithItems): from the
// items' cached encodings when the storage filled items, else (or when
// the list cannot be written that way) as any response.
func (s *RequestScope) writeList(ctx context.Context, w http.ResponseWriter, req *http.Request, o mediaTypeOptions, list runtime.Object, items *cacheable.Items) {
	if items != nil {
		if objs, ok := items.Get(); ok {
			err := s.writeSharedList(w, req, o, list, objs)
			if err == nil {
				return
			}
			if !errors.Is(err, errNoSharedList) {
				s.err(err, w, req)
				return
			}
			// Encode the list whole, from copies of the shared objects.
			copies := make([]runtime.Object, len(objs))
			for i, obj := range objs {
				copies[i] = obj.GetObject()
			}
			if err := meta.SetList(list, copies); err != nil {
				s.err(err, w, req)
				return
			}
		}
	}
	s.writeResponse(ctx, w, req, http.StatusOK, o, list)
}

// dropTypeMeta clears the kind and apiVersion of a typed list item, as
// kube-apiserver's list items have none: its storage holds internal-version
// objects, whose conversion to the served version leaves items' TypeMeta
// empty (only the list's own is set by the encoder). kapi's storage decodes
// the served version, which keeps them. Custom resources' items
// (unstructured) keep theirs, as upstream's do, and raw items are left
// alone.
func dropTypeMeta(item runtime.Object) {
	switch item.(type) {
	case runtime.Unstructured, *runtime.Unknown:
		return
	}
	if item.GetObjectKind().GroupVersionKind().Empty() {
		return
	}
	item.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
}

// writeSharedList writes list (its metadata; no items) with objs as its
// items. It writes nothing when it fails before the response starts:
// errNoSharedList (encode the list whole instead) or an encoding error.
func (s *RequestScope) writeSharedList(w http.ResponseWriter, req *http.Request, o mediaTypeOptions, list runtime.Object, objs []*cacheable.Object) error {
	enc := s.Serializer.EncoderForVersion(o.accepted.Serializer, s.Kind.GroupVersion())
	if err := meta.SetList(list, []runtime.Object{}); err != nil {
		return errNoSharedList
	}
	var shell bytes.Buffer
	if err := enc.Encode(list, &shell); err != nil {
		return errNoSharedList
	}
	prefix, suffix, ok := splitItems(shell.Bytes())
	if !ok {
		return errNoSharedList
	}
	items := newListItemEncoder(enc, list, s.Kind.GroupVersion())
	kind := string(items.id)
	acceptsGz := acceptsGzip(req)
	var gz *gzipItems
	var raws [][]byte
	size := int64(len(prefix) + len(suffix))
	if acceptsGz {
		// The same items as the last large list of this kind: their
		// compressed bytes are kept (listgzip.go).
		if gz = keptGzip(kind, objs); gz != nil {
			size += gz.size
		}
	}
	encodeItems := func() error {
		raws = make([][]byte, len(objs))
		for i, obj := range objs {
			raw, err := items.encoded(obj)
			if err != nil {
				if errors.Is(err, errNoSharedList) {
					return err
				}
				return fmt.Errorf("unable to encode list item: %w", err)
			}
			raws[i] = raw
			size += int64(len(raw))
			if i > 0 {
				size++ // the comma
			}
		}
		return nil
	}
	if gz == nil {
		if err := encodeItems(); err != nil {
			return err
		}
	}
	gzipped := size > gzipThresholdBytes && acceptsGz
	if !gzipped && gz != nil {
		// Kept compressed items, but a shorter prefix (no continue
		// token) took the list under the threshold: write it plain.
		gz, size = nil, int64(len(prefix)+len(suffix))
		if err := encodeItems(); err != nil {
			return err
		}
	}

	h := w.Header()
	h.Set("Content-Type", o.accepted.MediaType)
	if gzipped {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		if gz == nil {
			gz = compressItems(kind, objs, raws)
		}
	}
	w.WriteHeader(http.StatusOK)
	bw := bufWriterPool.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		bufWriterPool.Put(bw)
	}()
	var err error
	if gzipped {
		err = writeGzippedList(bw, prefix, suffix, gz)
	} else {
		_, _ = bw.Write(prefix)
		for i, raw := range raws {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			_, _ = bw.Write(raw)
		}
		_, err = bw.Write(suffix)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		s.logger().Debug("write list response", "err", err)
	}
	return nil
}

// splitItems cuts a list's JSON encoding with no items around its empty
// items array: prefix ends with its '[', suffix starts with its ']'.
func splitItems(enc []byte) (prefix, suffix []byte, ok bool) {
	i := bytes.Index(enc, jsonItemsMarker)
	if i < 0 || bytes.Contains(enc[i+len(jsonItemsMarker):], jsonItemsMarker) {
		return nil, nil, false
	}
	cut := i + len(jsonItemsMarker) - 1
	return enc[:cut], enc[cut:], true
}

// ListItemEncoder is an encoder that writes one item of a list exactly as
// it writes that item inside a list (JSON: the bytes between the items
// array's brackets, no separator), without changing the item, more cheaply
// than the encoding of a one-item list it would otherwise be cut from.
// ok is false when it cannot for this item or encoding (nothing written).
// The custom-resource encoder implements it.
type ListItemEncoder interface {
	EncodeListItem(item runtime.Object, w io.Writer) (ok bool, err error)
}

// errNotDirect: the encoder's EncodeListItem declined the item.
var errNotDirect = errors.New("list item not encoded directly")

// listItemEncoder encodes one item as the encoder writes it inside a list
// of list's type: with the encoder's EncodeListItem if it has one, else by
// encoding a list of that type holding the item alone, without list
// metadata, and cutting the item out.
type listItemEncoder struct {
	enc            runtime.Encoder
	list           runtime.Object
	direct         ListItemEncoder
	id, directID   runtime.Identifier
	encodeFn       func(runtime.Object, io.Writer) error
	encodeDirectFn func(runtime.Object, io.Writer) error

	once           sync.Once
	empty          runtime.Object
	prefix, suffix []byte
	err            error
}

func newListItemEncoder(enc runtime.Encoder, list runtime.Object, gv schema.GroupVersion) *listItemEncoder {
	key := string(enc.Identifier()) + ";" + gv.String() + ";" + list.GetObjectKind().GroupVersionKind().String()
	e := &listItemEncoder{enc: enc, list: list, id: runtime.Identifier("list-item;" + key)}
	e.encodeFn = e.encode
	if d, ok := enc.(ListItemEncoder); ok {
		e.direct, e.directID = d, runtime.Identifier("list-item-direct;"+key)
		e.encodeDirectFn = e.encodeDirect
	}
	return e
}

// encoded returns obj's bytes as an item of the list, encoded once per
// shared object and kept with it.
func (e *listItemEncoder) encoded(obj *cacheable.Object) ([]byte, error) {
	if e.direct != nil {
		raw, err := obj.EncodedShared(e.directID, e.encodeDirectFn)
		if !errors.Is(err, errNotDirect) {
			return raw, err
		}
	}
	return obj.Encoded(e.id, e.encodeFn)
}

func (e *listItemEncoder) encodeDirect(item runtime.Object, w io.Writer) error {
	ok, err := e.direct.EncodeListItem(item, w)
	if err == nil && !ok {
		err = errNotDirect
	}
	return err
}

func (e *listItemEncoder) encode(item runtime.Object, w io.Writer) error {
	e.once.Do(func() {
		e.empty = e.list.DeepCopyObject()
		if m, err := meta.ListAccessor(e.empty); err == nil {
			m.SetResourceVersion("")
			m.SetContinue("")
			m.SetRemainingItemCount(nil)
			m.SetSelfLink("")
		}
		var buf bytes.Buffer
		if e.err = e.enc.Encode(e.empty, &buf); e.err != nil {
			return
		}
		var ok bool
		if e.prefix, e.suffix, ok = splitItems(buf.Bytes()); !ok {
			e.err = errNoSharedList
		}
	})
	if e.err != nil {
		return e.err
	}
	one := e.empty.DeepCopyObject()
	if _, ok := item.(runtime.Unstructured); !ok && !item.GetObjectKind().GroupVersionKind().Empty() {
		// item is shared: its kind and apiVersion are dropped on a copy
		// (see dropTypeMeta), once per kept encoding.
		item = item.DeepCopyObject()
		dropTypeMeta(item)
	}
	if err := meta.SetList(one, []runtime.Object{item}); err != nil {
		return errNoSharedList
	}
	var buf bytes.Buffer
	if err := e.enc.Encode(one, &buf); err != nil {
		return err
	}
	b := buf.Bytes()
	if len(b) <= len(e.prefix)+len(e.suffix) || !bytes.HasPrefix(b, e.prefix) || !bytes.HasSuffix(b, e.suffix) {
		return errNoSharedList
	}
	_, err := w.Write(b[len(e.prefix) : len(b)-len(e.suffix)])
	return err
}

// bufWriterPool batches a list's many small writes into large ones.
var bufWriterPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}
