package handlers

import (
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The media types kapi serves (CBOR is not served: upstream gates it off).
const (
	mediaTypeJSON     = runtime.ContentTypeJSON
	mediaTypeYAML     = runtime.ContentTypeYAML
	mediaTypeProtobuf = runtime.ContentTypeProtobuf
)

// servedMediaTypes returns ns's serializers kapi serves, in ns's order
// (JSON first, so it is the default).
func servedMediaTypes(ns runtime.NegotiatedSerializer) []runtime.SerializerInfo {
	all := ns.SupportedMediaTypes()
	out := make([]runtime.SerializerInfo, 0, len(all))
	for _, info := range all {
		if served(&info) {
			out = append(out, info)
		}
	}
	return out
}

// served reports whether kapi serves info's media type.
func served(info *runtime.SerializerInfo) bool { return isServedMediaType(info.MediaType) }

// isServedMediaType reports whether mt is one of the media types kapi
// serves, spelled exactly as they are (lower case, no parameters).
func isServedMediaType(mt string) bool {
	switch mt {
	case mediaTypeJSON, mediaTypeYAML, mediaTypeProtobuf:
		return true
	}
	return false
}

// mediaTypesFor lists ns's media types and stream media types, as the
// NotAcceptable and UnsupportedMediaType messages name them.
func mediaTypesFor(ns runtime.NegotiatedSerializer) (mediaTypes, streamMediaTypes []string) {
	for _, info := range servedMediaTypes(ns) {
		mediaTypes = append(mediaTypes, info.MediaType)
		if info.StreamSerializer != nil {
			streamMediaTypes = append(streamMediaTypes, info.MediaType+";stream=watch")
		}
	}
	return mediaTypes, streamMediaTypes
}

// MediaTypesFor lists the media types (and the watch stream media types)
// ns serves, in its order, as the 406 and 415 messages name them.
func MediaTypesFor(ns runtime.NegotiatedSerializer) (mediaTypes, streamMediaTypes []string) {
	return mediaTypesFor(ns)
}

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	typ, subType string
	q            float64
	params       map[string]string
}

// parseAccept splits an Accept header into clauses, best first: higher q,
// then concrete types before wildcards (a stable sort, so header order
// breaks ties). Malformed ranges are skipped. The clauses are appended to
// out (the caller's buffer: the usual header of one or two clauses needs
// no allocation).
func parseAccept(header string, out []acceptClause) []acceptClause {
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		mr, params, _ := strings.Cut(part, ";")
		mr = strings.TrimSpace(mr)
		if mr == "" {
			continue
		}
		c := acceptClause{q: 1}
		typ, sub, ok := strings.Cut(mr, "/")
		switch {
		case ok:
			c.typ, c.subType = strings.TrimSpace(typ), strings.TrimSpace(sub)
		case mr == "*":
			c.typ, c.subType = "*", "*"
		default:
			continue
		}
		if c.typ == "" || c.subType == "" {
			continue
		}
		for params != "" {
			var p string
			p, params, _ = strings.Cut(params, ";")
			k, v, _ := strings.Cut(p, "=")
			k = strings.TrimSpace(k)
			v = strings.TrimSpace(v)
			if k == "" {
				continue
			}
			if k == "q" {
				if q, err := strconv.ParseFloat(v, 64); err == nil {
					c.q = q
				}
				continue
			}
			if c.params == nil {
				c.params = map[string]string{}
			}
			c.params[k] = v
		}
		out = append(out, c)
	}
	if len(out) > 1 {
		// cmp(a, b) < 0 exactly when a goes before b, so this orders as
		// the sort.SliceStable with that less function did, without its
		// reflection.
		slices.SortStableFunc(out, func(a, b acceptClause) int {
			if acceptBefore(a, b) {
				return -1
			}
			if acceptBefore(b, a) {
				return 1
			}
			return 0
		})
	}
	return out
}

// acceptBefore orders Accept clauses: higher q first, then concrete types
// before wildcards.
func acceptBefore(a, b acceptClause) bool {
	if a.q != b.q {
		return a.q > b.q
	}
	if a.typ != "*" && b.typ == "*" {
		return true
	}
	if a.subType != "*" && b.subType == "*" {
		return true
	}
	return false
}

// restrictions says which transformations and schemas an endpoint allows.
type restrictions interface {
	// allowsTransform reports whether the media type may carry the
	// requested conversion (target nil: none requested).
	allowsTransform(mimeType, mimeSubType string, target *schema.GroupVersionKind) bool
	allowsServerVersion(version string) bool
	allowsStreamSchema(s string) bool
}

// defaultRestrictions allow no conversion: Status, discovery documents.
type defaultRestrictions struct{}

func (defaultRestrictions) allowsTransform(_, _ string, target *schema.GroupVersionKind) bool {
	return target == nil
}
func (defaultRestrictions) allowsServerVersion(string) bool  { return false }
func (defaultRestrictions) allowsStreamSchema(s string) bool { return s == "watch" }

// ObjectMediaTypeLimiter is implemented by a NegotiatedSerializer whose
// resource's own objects are written and read in only some of its media
// types (custom resources: not protobuf), the others carrying only the
// meta.k8s.io transformations and Status, as upstream's
// RequestScope.StandardSerializers.
type ObjectMediaTypeLimiter interface {
	ServesObjectsAs(mediaType string) bool
}

// BodyMediaTypeLimiter is implemented by a NegotiatedSerializer that
// reads request bodies in only some of its media types (custom resources:
// not protobuf).
type BodyMediaTypeLimiter interface {
	DecodesBodiesFrom(mediaType string) bool
}

func (s *RequestScope) allowsTransform(mimeType, mimeSubType string, target *schema.GroupVersionKind) bool {
	if target == nil {
		if l, ok := s.Serializer.(ObjectMediaTypeLimiter); ok {
			return l.ServesObjectsAs(joinMediaType(mimeType, mimeSubType))
		}
		return true
	}
	if gv := target.GroupVersion(); gv != metav1.SchemeGroupVersion && gv != metav1beta1.SchemeGroupVersion {
		return false
	}
	switch target.Kind {
	case "Table":
		// As upstream: no Table in protobuf.
		return s.TableConvertor != nil && mimeType == "application" && (mimeSubType == "json" || mimeSubType == "yaml")
	case "PartialObjectMetadata", "PartialObjectMetadataList":
		return true
	}
	return false
}

// joinMediaType is mimeType + "/" + mimeSubType, without building the
// string for the media types served (an allocation per request).
func joinMediaType(mimeType, mimeSubType string) string {
	if mimeType == "application" {
		switch mimeSubType {
		case "json":
			return "application/json"
		case "yaml":
			return "application/yaml"
		case "vnd.kubernetes.protobuf":
			return "application/vnd.kubernetes.protobuf"
		}
	}
	return mimeType + "/" + mimeSubType
}

func (s *RequestScope) allowsServerVersion(version string) bool {
	return version == metav1.SchemeGroupVersion.Version
}
func (s *RequestScope) allowsStreamSchema(schema string) bool { return schema == "watch" }

// mediaTypeOptions is the outcome of Accept negotiation.
type mediaTypeOptions struct {
	// convert is the as/g/v transformation asked for (Table,
	// PartialObjectMetadata[List]), nil for none.
	convert *schema.GroupVersionKind
	pretty  bool
	stream  string
	// accepted is the serializer chosen.
	accepted runtime.SerializerInfo
}

func acceptOptions(params map[string]string, info *runtime.SerializerInfo, r restrictions) (mediaTypeOptions, bool) {
	var o mediaTypeOptions
	for k, v := range params {
		switch k {
		case "as":
			if o.convert == nil {
				o.convert = &schema.GroupVersionKind{}
			}
			o.convert.Kind = v
		case "g":
			if o.convert == nil {
				o.convert = &schema.GroupVersionKind{}
			}
			o.convert.Group = v
		case "v":
			if o.convert == nil {
				o.convert = &schema.GroupVersionKind{}
			}
			o.convert.Version = v
		case "stream":
			if v != "" && (info.StreamSerializer == nil || !r.allowsStreamSchema(v)) {
				return o, false
			}
			o.stream = v
		case "sv":
			if v != "" && !r.allowsServerVersion(v) {
				return o, false
			}
		case "pretty":
			o.pretty = v == "1"
		}
	}
	if !r.allowsTransform(info.MediaTypeType, info.MediaTypeSubType, o.convert) {
		return o, false
	}
	o.accepted = *info
	return o, true
}

// negotiateMediaType picks the first Accept clause ns can serve under r.
// An empty header means the first (JSON) serializer.
//
// It goes through ns's list itself, skipping what kapi does not serve
// (servedMediaTypes, in the same order, without making the list on every
// request); the list is only read.
func negotiateMediaType(header string, ns runtime.NegotiatedSerializer, r restrictions) (mediaTypeOptions, bool) {
	all := ns.SupportedMediaTypes()
	if strings.TrimSpace(header) == "" {
		for i := range all {
			if served(&all[i]) {
				return mediaTypeOptions{accepted: all[i]}, true
			}
		}
		return mediaTypeOptions{}, false
	}
	var buf [4]acceptClause
	for _, c := range parseAccept(header, buf[:0]) {
		for i := range all {
			info := &all[i]
			if !served(info) {
				continue
			}
			if (c.typ == info.MediaTypeType && (c.subType == info.MediaTypeSubType || c.subType == "*")) ||
				(c.typ == "*" && c.subType == "*") {
				if o, ok := acceptOptions(c.params, info, r); ok {
					return o, true
				}
			}
		}
	}
	return mediaTypeOptions{}, false
}

// negotiateOutput negotiates the response's media type (406 NotAcceptable
// if nothing fits) and returns the serializer to write with: the pretty one
// when asked for by `pretty=1` in Accept, `?pretty=true`, or a browser/curl
// User-Agent (as upstream).
func negotiateOutput(req *http.Request, ns runtime.NegotiatedSerializer, r restrictions) (mediaTypeOptions, runtime.SerializerInfo, error) {
	o, ok := negotiateMediaType(req.Header.Get("Accept"), ns, r)
	if !ok {
		supported, _ := mediaTypesFor(ns)
		return o, runtime.SerializerInfo{}, newNotAcceptable(supported)
	}
	info := o.accepted
	if (o.pretty || isPrettyPrint(req)) && info.PrettySerializer != nil {
		info.Serializer = info.PrettySerializer
	}
	return o, info, nil
}

// negotiateOutputStream picks the watch stream serializer.
func negotiateOutputStream(req *http.Request, ns runtime.NegotiatedSerializer, r restrictions) (mediaTypeOptions, error) {
	o, ok := negotiateMediaType(req.Header.Get("Accept"), ns, r)
	if !ok || o.accepted.StreamSerializer == nil {
		_, supported := mediaTypesFor(ns)
		return o, newNotAcceptable(supported)
	}
	return o, nil
}

// negotiateInput picks the serializer for the request body from its
// Content-Type (JSON when absent); 415 UnsupportedMediaType otherwise.
func negotiateInput(req *http.Request, ns runtime.NegotiatedSerializer) (runtime.SerializerInfo, error) {
	// ns's list is read in place, without a copy, and the Content-Types
	// that name a served type exactly are not parsed: every write request
	// comes here.
	all := ns.SupportedMediaTypes()
	mt := req.Header.Get("Content-Type")
	ok := true
	switch {
	case mt == "":
		for _, info := range all {
			if served(&info) {
				return info, nil
			}
		}
		ok = false
	case !isServedMediaType(mt):
		parsed, _, err := mime.ParseMediaType(mt)
		mt, ok = parsed, err == nil
	}
	for _, info := range all {
		if !ok || !served(&info) || info.MediaType != mt {
			continue
		}
		if l, isLimiter := ns.(BodyMediaTypeLimiter); isLimiter && !l.DecodesBodiesFrom(mt) {
			// A custom resource in protobuf: upstream's handler panics
			// (kube-apiserver v1.37.2 resets the stream); a 415 naming
			// what the body may be written in.
			var objects []string
			for _, info := range servedMediaTypes(ns) {
				if l.DecodesBodiesFrom(info.MediaType) {
					objects = append(objects, info.MediaType)
				}
			}
			return runtime.SerializerInfo{}, newUnsupportedMediaType(objects)
		}
		return info, nil
	}
	supported, _ := mediaTypesFor(ns)
	return runtime.SerializerInfo{}, newUnsupportedMediaType(supported)
}

// isPrettyPrint: `?pretty=<bool>` when given, else true for curl, Wget and
// browsers (upstream's rule).
func isPrettyPrint(req *http.Request) bool {
	if req.URL != nil && strings.Contains(req.URL.RawQuery, "pretty") {
		if pp := req.URL.Query().Get("pretty"); pp != "" {
			b, _ := strconv.ParseBool(pp)
			return b
		}
	}
	ua := req.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}
