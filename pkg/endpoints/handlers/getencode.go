package handlers

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// A GET served from the watch cache is written from the entry's kept
// encoding: the storage hands the handler the entry's shared object
// (cacheable.WithItem) instead of a deep copy, and the response body is
// the bytes the encoder wrote for a copy of that object the first time a
// GET needed them in this encoding (kept with the entry, dropped with it
// when a write replaces it). The bytes are exactly those the response
// encoder writes for the object: the same encoder, on an equal object.
//
// Only responses with no transformation (no Table or
// PartialObjectMetadata), no pretty printing, and whose audit event does
// not record the response object take this path; any media type the
// scope's serializer offers does (each has its own kept encoding).

// sharedGetWanted tells whether a GET may take the watch cache's shared
// entry; decided before the storage is read.
func (s *RequestScope) sharedGetWanted(ctx context.Context, req *http.Request, o mediaTypeOptions) bool {
	return s.SharedGetObjects && o.convert == nil && !o.pretty && o.accepted.Serializer != nil &&
		!isPrettyPrint(req) && !audit.ResponseObjectWanted(ctx)
}

// getEncoder is the encoder of a GET response for one serializer and its
// kept-encoding identifier; shared: it never changes the object it
// encodes (see ObjectPreservingEncoder).
type getEncoder struct {
	enc    runtime.Encoder
	id     runtime.Identifier
	shared bool
}

// ObjectPreservingEncoder is a response encoder that never changes the
// object it encodes, whatever the object (custom resources' encoder): the
// kept encoding of a GET is then computed from the watch cache's shared
// object itself instead of a deep copy of it (the same bytes: the same
// encoder on an equal object). Other encoders (a versioning codec sets the
// kind of the object it encodes) get a copy.
type ObjectPreservingEncoder interface {
	runtime.Encoder
	// PreservesObjects is a marker: the encoder's Encode leaves its object
	// unchanged.
	PreservesObjects()
}

// getEncoderFor returns the response encoder for the serializer info
// (the one writeResponse builds for it), built once per scope and media
// type (the scope's serializer offers one serializer per media type).
func (s *RequestScope) getEncoderFor(info runtime.SerializerInfo) *getEncoder {
	if e, ok := s.getEncoders.Load(info.MediaType); ok {
		return e.(*getEncoder)
	}
	gv := s.Kind.GroupVersion()
	enc := s.Serializer.EncoderForVersion(info.Serializer, gv)
	_, shared := enc.(ObjectPreservingEncoder)
	e := &getEncoder{enc: enc, id: runtime.Identifier("get;" + string(enc.Identifier()) + ";" + gv.String()), shared: shared}
	actual, _ := s.getEncoders.LoadOrStore(info.MediaType, e)
	return actual.(*getEncoder)
}

// writeGet writes the object of a GET: from the shared object's kept
// encoding when the storage filled item, else (or when that encoding
// fails) as any response.
func (s *RequestScope) writeGet(ctx context.Context, w http.ResponseWriter, req *http.Request, o mediaTypeOptions, result runtime.Object, item *cacheable.Item) {
	if item != nil {
		if obj, ok := item.Get(); ok {
			e := s.getEncoderFor(o.accepted)
			var raw []byte
			var err error
			if e.shared {
				raw, err = obj.EncodedShared(e.id, e.enc.Encode)
			} else {
				raw, err = obj.Encoded(e.id, e.enc.Encode)
			}
			if err == nil {
				writeRaw(w, req, s.logger(), o.accepted.MediaType, http.StatusOK, raw)
				return
			}
			// Encode a copy as any response does: the same error, or a
			// Status in its place.
			result = obj.GetObject()
		}
	}
	s.writeResponse(ctx, w, req, http.StatusOK, o, result)
}

// writeRaw writes an encoded body as serializeObject does.
func writeRaw(w http.ResponseWriter, req *http.Request, logger *slog.Logger, mediaType string, code int, raw []byte) {
	h := w.Header()
	h.Set("Content-Type", mediaType)
	var out io.Writer = w
	var gw *gzip.Writer
	if len(raw) > gzipThresholdBytes && acceptsGzip(req) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		gw = gzipPool.Get().(*gzip.Writer)
		gw.Reset(w)
		out = gw
	}
	w.WriteHeader(code)
	_, err := out.Write(raw)
	if gw != nil {
		if cerr := gw.Close(); err == nil {
			err = cerr
		}
		gw.Reset(nil)
		gzipPool.Put(gw)
	}
	if err != nil {
		logger.Debug("write response", "err", err)
	}
}
