package discovery

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// encoding is one serialized form of a document.
type encoding int

const (
	encJSON encoding = iota
	encJSONPretty
	encYAML
	encProtobuf
	numEncodings
)

// mediaType is a media type discovery can be served in, in upstream's
// order of preference (the first is used for an empty Accept header).
type mediaType struct {
	typ, subType string
	enc          encoding
	stream       bool // has a stream serializer (json and protobuf do)
}

func (m mediaType) String() string { return m.typ + "/" + m.subType }

var mediaTypes = []mediaType{
	{typ: "application", subType: "json", enc: encJSON, stream: true},
	{typ: "application", subType: "yaml", enc: encYAML},
	{typ: "application", subType: "vnd.kubernetes.protobuf", enc: encProtobuf, stream: true},
}

// notAcceptableMessage is the 406 message kube-apiserver gives for the media
// types above.
var notAcceptableMessage = func() string {
	names := make([]string, len(mediaTypes))
	for i, m := range mediaTypes {
		names[i] = m.String()
	}
	return "only the following media types are accepted: " + strings.Join(names, ", ")
}()

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	typ, subType string
	q            float64
	params       map[string]string
}

// parseAccept splits an Accept header into clauses sorted by preference:
// higher q first, then concrete types before wildcards, otherwise in header
// order. Malformed ranges are skipped, as goautoneg (which kube uses) does.
func parseAccept(header string) []acceptClause {
	var out []acceptClause
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		rng, rest, _ := strings.Cut(part, ";")
		c := acceptClause{q: 1}
		typ, sub, hasSlash := strings.Cut(rng, "/")
		c.typ = strings.TrimSpace(typ)
		switch {
		case !hasSlash || sub == "":
			if c.typ != "*" {
				continue
			}
			c.subType = "*"
		case strings.Contains(sub, "/"):
			continue
		default:
			c.subType = strings.TrimSpace(sub)
		}
		for rest != "" {
			var p string
			p, rest, _ = strings.Cut(rest, ";")
			k, v, ok := strings.Cut(p, "=")
			if !ok || v == "" || strings.Contains(v, "=") {
				continue
			}
			k = strings.TrimSpace(k)
			v = strings.TrimSpace(v)
			if k == "q" {
				q, err := strconv.ParseFloat(v, 32)
				if err != nil {
					q = 0
				}
				c.q = q
				continue
			}
			if c.params == nil {
				c.params = map[string]string{}
			}
			c.params[k] = v
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.q != b.q {
			return a.q > b.q
		}
		if a.typ != "*" && b.typ == "*" {
			return true
		}
		return a.subType != "*" && b.subType == "*"
	})
	return out
}

// negotiated is the outcome of negotiation.
type negotiated struct {
	media   mediaType
	pretty  bool
	convert *schema.GroupVersionKind // the aggregated discovery GVK asked for
}

// restriction decides which conversions (the g, v and as parameters) an
// endpoint accepts; nil target means no conversion was asked for.
type restriction func(target *schema.GroupVersionKind) bool

// legacyOnly is kube's default endpoint restriction: no conversion.
func legacyOnly(target *schema.GroupVersionKind) bool { return target == nil }

// negotiate picks the media type for header among mediaTypes under allow,
// as kube's NegotiateMediaTypeOptions does. ok is false when nothing in the
// header is acceptable.
func negotiate(header string, allow restriction) (negotiated, bool) {
	if header == "" {
		return negotiated{media: mediaTypes[0]}, true
	}
	for _, c := range parseAccept(header) {
		for _, m := range mediaTypes {
			match := (c.typ == m.typ && (c.subType == m.subType || c.subType == "*")) ||
				(c.typ == "*" && c.subType == "*")
			if !match {
				continue
			}
			if n, ok := acceptParams(c.params, m, allow); ok {
				return n, true
			}
		}
	}
	return negotiated{}, false
}

func acceptParams(params map[string]string, m mediaType, allow restriction) (negotiated, bool) {
	n := negotiated{media: m}
	gvk := func() *schema.GroupVersionKind {
		if n.convert == nil {
			n.convert = &schema.GroupVersionKind{}
		}
		return n.convert
	}
	for k, v := range params {
		switch k {
		case "as":
			gvk().Kind = v
		case "g":
			gvk().Group = v
		case "v":
			gvk().Version = v
		case "stream":
			if v != "" && (!m.stream || v != "watch") {
				return negotiated{}, false
			}
		case "sv":
			if v != "" {
				return negotiated{}, false
			}
		case "pretty":
			n.pretty = v == "1"
		}
	}
	if !allow(n.convert) {
		return negotiated{}, false
	}
	return n, true
}

// prettyRequested reports kube's deprecated ways to ask for indented JSON:
// ?pretty=true, or a browser, curl or wget user agent.
func prettyRequested(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if pp := r.URL.Query().Get("pretty"); pp != "" {
			pretty, _ := strconv.ParseBool(pp)
			return pretty
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// acceptsGzip reports whether Accept-Encoding lists gzip.
func acceptsGzip(r *http.Request) bool {
	for _, tok := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(tok) == "gzip" {
			return true
		}
	}
	return false
}
