package handlers

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta"
	"github.com/kapi-dev/kapi/pkg/audit"
)

// gzipThresholdBytes: responses larger than this are gzipped when the
// client accepts gzip (upstream's defaultGzipThresholdBytes).
const gzipThresholdBytes = 128 * 1024

// metaCodecs encodes the meta.k8s.io transformation targets (Table,
// PartialObjectMetadata[List]) in v1 and v1beta1.
var metaCodecs = metainternalversionscheme.Codecs

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// gzipLevel is upstream's gzipContentEncodingLevel (k8s.io/apiserver
// pkg/endpoints/handlers/responsewriters/compression.go, v1.37): level 1,
// the cheapest, whose output is at most ~1.5x larger (kubernetes issue
// 112296). Level 6 (gzip.DefaultCompression) cost kapi twice the CPU of
// a large list's compression.
const gzipLevel = gzip.BestSpeed

var gzipPool = sync.Pool{New: func() any {
	gw, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return gw
}}

// acceptsGzip reports whether Accept-Encoding lists gzip.
func acceptsGzip(req *http.Request) bool {
	for _, tok := range strings.Split(req.Header.Get("Accept-Encoding"), ",") {
		name, _, _ := strings.Cut(tok, ";")
		if strings.TrimSpace(name) == "gzip" {
			return true
		}
	}
	return false
}

// serializeObject encodes obj and writes it with code and Content-Type
// mediaType, gzipped when the client accepts gzip and the body is over
// 128 KiB. An encoding failure becomes a Status in the same encoding.
func serializeObject(w http.ResponseWriter, req *http.Request, logger *slog.Logger, mediaType string, enc runtime.Encoder, code int, obj runtime.Object) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)

	if err := enc.Encode(obj, buf); err != nil {
		logger.Error("unable to encode response", "mediaType", mediaType, "err", err)
		status := errorToStatus(err, logger)
		if code >= http.StatusOK && code < http.StatusBadRequest {
			code = int(status.Code)
		}
		buf.Reset()
		if err := enc.Encode(status, buf); err != nil {
			mediaType = "text/plain"
			buf.Reset()
			fmt.Fprintf(buf, "%s: %s", status.Reason, status.Message)
		}
	}
	h := w.Header()
	h.Set("Content-Type", mediaType)
	if buf.Len() > gzipThresholdBytes && acceptsGzip(req) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(code)
		gw := gzipPool.Get().(*gzip.Writer)
		gw.Reset(w)
		_, err := gw.Write(buf.Bytes())
		if err == nil {
			err = gw.Close()
		}
		gw.Reset(nil)
		gzipPool.Put(gw)
		if err != nil {
			logger.Debug("write gzipped response", "err", err)
		}
		return
	}
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// writeRawJSON writes a non-negotiated indented JSON body.
func writeRawJSON(w http.ResponseWriter, code int, obj any) {
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(out)
}

// tableOptionsFor decodes TableOptions from the query when a Table is
// asked for; nil otherwise.
func (s *RequestScope) tableOptionsFor(o mediaTypeOptions, req *http.Request) (*metav1.TableOptions, error) {
	t := o.convert
	if t == nil || t.Kind != "Table" || !isMetaGV(t.GroupVersion()) {
		return nil, nil
	}
	opts := &metav1.TableOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	switch errs := validation.ValidateTableOptions(opts); len(errs) {
	case 0:
		return opts, nil
	case 1:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
}

func isMetaGV(gv schema.GroupVersion) bool {
	return gv == metav1.SchemeGroupVersion || gv == metav1beta1.SchemeGroupVersion
}

// transformObject applies the requested conversion (Table,
// PartialObjectMetadata, PartialObjectMetadataList) to obj; Status objects
// pass through.
func (s *RequestScope) transformObject(ctx context.Context, obj runtime.Object, tableOpts *metav1.TableOptions, target *schema.GroupVersionKind) (runtime.Object, error) {
	if _, ok := obj.(*metav1.Status); ok {
		return obj, nil
	}
	switch {
	case target == nil:
		return obj, nil
	case target.Kind == "PartialObjectMetadata":
		return asPartialObjectMetadata(obj, target.GroupVersion())
	case target.Kind == "PartialObjectMetadataList":
		return asPartialObjectMetadataList(obj, target.GroupVersion())
	case target.Kind == "Table":
		if tableOpts == nil {
			tableOpts = &metav1.TableOptions{}
		}
		return s.asTable(ctx, obj, tableOpts, target.GroupVersion())
	}
	supported, _ := mediaTypesFor(metaCodecs)
	return nil, newNotAcceptable(supported)
}

func (s *RequestScope) asTable(ctx context.Context, obj runtime.Object, opts *metav1.TableOptions, gv schema.GroupVersion) (runtime.Object, error) {
	if !isMetaGV(gv) {
		return nil, newNotAcceptableMessage(fmt.Sprintf("no Table exists in group version %s", gv))
	}
	table, err := s.TableConvertor.ConvertToTable(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		if row.Object.Object == nil {
			continue
		}
		switch opts.IncludeObject {
		case metav1.IncludeObject:
			row.Object.Object, err = s.Convertor.ConvertToVersion(row.Object.Object, s.Kind.GroupVersion())
			if err != nil {
				return nil, err
			}
		case metav1.IncludeMetadata, "":
			m, err := meta.Accessor(row.Object.Object)
			if err != nil {
				return nil, err
			}
			partial := meta.AsPartialObjectMetadata(partialSource(m))
			partial.GetObjectKind().SetGroupVersionKind(gv.WithKind("PartialObjectMetadata"))
			row.Object.Object = partial
		case metav1.IncludeNone:
			row.Object.Object = nil
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", opts.IncludeObject))
		}
	}
	return table, nil
}

func asPartialObjectMetadata(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	if meta.IsListType(obj) {
		return nil, newNotAcceptableMessage(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%T)", obj))
	}
	if !isMetaGV(gv) {
		return nil, newNotAcceptableMessage(fmt.Sprintf("no PartialObjectMetadataList exists in group version %s", gv))
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	partial := meta.AsPartialObjectMetadata(partialSource(m))
	partial.GetObjectKind().SetGroupVersionKind(gv.WithKind("PartialObjectMetadata"))
	return partial, nil
}

// partialSource is m for meta.AsPartialObjectMetadata: a custom
// resource's managed fields read by unstructuredmeta.ManagedFields (the
// same entries as GetManagedFields, without its reflective conversion:
// every metadata watch event and metadata list item of a custom resource
// converts them).
func partialSource(m metav1.Object) metav1.Object {
	if u, ok := m.(*unstructured.Unstructured); ok {
		return unstructuredManagedFieldsMeta{u}
	}
	return m
}

type unstructuredManagedFieldsMeta struct{ *unstructured.Unstructured }

func (m unstructuredManagedFieldsMeta) GetManagedFields() []metav1.ManagedFieldsEntry {
	return unstructuredmeta.ManagedFields(m.Unstructured)
}

func asPartialObjectMetadataList(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	li, ok := obj.(metav1.ListInterface)
	if !ok {
		return nil, newNotAcceptableMessage(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%T)", obj))
	}
	if !isMetaGV(gv) {
		return nil, newNotAcceptableMessage(fmt.Sprintf("no PartialObjectMetadataList exists in group version %s", gv))
	}
	gvk := gv.WithKind("PartialObjectMetadata")
	var items []metav1.PartialObjectMetadata
	err := meta.EachListItem(obj, func(item runtime.Object) error {
		m, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		partial := meta.AsPartialObjectMetadata(partialSource(m))
		partial.GetObjectKind().SetGroupVersionKind(gvk)
		items = append(items, *partial)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []metav1.PartialObjectMetadata{}
	}
	listMeta := metav1.ListMeta{
		ResourceVersion:    li.GetResourceVersion(),
		Continue:           li.GetContinue(),
		RemainingItemCount: li.GetRemainingItemCount(),
	}
	if gv == metav1beta1.SchemeGroupVersion {
		return &metav1beta1.PartialObjectMetadataList{ListMeta: listMeta, Items: items}, nil
	}
	return &metav1.PartialObjectMetadataList{ListMeta: listMeta, Items: items}, nil
}

// writeResponse transforms result as negotiated (Table, partial metadata)
// and writes it with code; upstream's transformResponseObject.
func (s *RequestScope) writeResponse(ctx context.Context, w http.ResponseWriter, req *http.Request, code int, o mediaTypeOptions, result runtime.Object) {
	tableOpts, err := s.tableOptionsFor(o, req)
	if err != nil {
		s.err(err, w, req)
		return
	}
	if meta.IsListType(result) {
		if meta.LenList(result) == 0 {
			// Empty lists carry "items": [] rather than null.
			if err := meta.SetList(result, []runtime.Object{}); err != nil {
				s.err(err, w, req)
				return
			}
		} else if o.convert == nil {
			// A list's items are the request's own (decoded or copied
			// for it by the storage): see dropTypeMeta.
			if err := meta.EachListItem(result, func(item runtime.Object) error {
				dropTypeMeta(item)
				return nil
			}); err != nil {
				s.err(err, w, req)
				return
			}
		}
	}
	obj, err := s.transformObject(ctx, result, tableOpts, o.convert)
	if err != nil {
		s.err(err, w, req)
		return
	}

	ns, gv := s.Serializer, s.Kind.GroupVersion()
	info := o.accepted
	if o.convert != nil && isMetaGV(o.convert.GroupVersion()) {
		switch o.convert.Kind {
		case "Table", "PartialObjectMetadata", "PartialObjectMetadataList":
			metaInfo, ok := runtime.SerializerInfoForMediaType(metaCodecs.SupportedMediaTypes(), info.MediaType)
			if !ok {
				supported, _ := mediaTypesFor(metaCodecs)
				s.err(newNotAcceptable(supported), w, req)
				return
			}
			ns, gv, info = metaCodecs, o.convert.GroupVersion(), metaInfo
		}
	}
	if (o.pretty || isPrettyPrint(req)) && info.PrettySerializer != nil {
		info.Serializer = info.PrettySerializer
	}
	audit.LogResponseObject(ctx, obj, gv, ns)
	serializeObject(w, req, s.logger(), info.MediaType, ns.EncoderForVersion(info.Serializer, gv), code, obj)
}
