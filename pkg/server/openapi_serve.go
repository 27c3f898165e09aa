package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/NYTimes/gziphandler"
	"github.com/munnerz/goautoneg"
)

// The documents are served as kube-apiserver v1.37 serves them, with
// kube-openapi's handlers (pkg/handler for v2, pkg/handler3 for the v3
// documents) and kube-aggregator's v3 index: the Accept header chooses
// JSON or protobuf, goautoneg-style, or the answer is a 406 with no body;
// the bytes go out through http.ServeContent, so ETag/If-None-Match (304),
// Last-Modified/If-Modified-Since, HEAD and Range requests (206) behave as
// upstream's do. client-go's and kubectl's OpenAPI v3 caches rely on the
// hash URLs and ETags; openapi clients may ask for protobuf.

// openAPIType is a media type a document is served in.
type openAPIType struct {
	// subType is what an Accept clause names, under "application".
	subType string
	// protobuf says the document goes in gnostic's protobuf form.
	protobuf bool
	// contentType is what the response says it is.
	contentType string
}

// The protobuf forms are asked for with either name; the response names
// them with the parseable one (a media type may not contain "@"), as
// upstream.
const (
	protoV2ContentType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	protoV3ContentType = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
)

// The types of each document, in kube-openapi's order.
var (
	v2Types = []openAPIType{
		{"json", false, "application/json"},
		{"com.github.proto-openapi.spec.v2@v1.0+protobuf", true, protoV2ContentType},
		{"com.github.proto-openapi.spec.v2.v1.0+protobuf", true, protoV2ContentType},
	}
	v3Types = []openAPIType{
		{"json", false, "application/json"},
		{"com.github.proto-openapi.spec.v3.v1.0+protobuf", true, protoV3ContentType},
		{"com.github.proto-openapi.spec.v3@v1.0+protobuf", true, protoV3ContentType},
	}
)

// acceptClauses parses the request's Accept header as kube-openapi does:
// goautoneg's parse and order (by q, wildcards last; a clause with q=0 is
// still a clause), "*/*" when absent.
func acceptClauses(r *http.Request) []goautoneg.Accept {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	return goautoneg.ParseAccept(accept)
}

// negotiateOpenAPI returns the first of types (in order) that the first
// clause matching any of them accepts; "*" matches any type or subtype.
func negotiateOpenAPI(clauses []goautoneg.Accept, types []openAPIType) (openAPIType, bool) {
	for _, c := range clauses {
		for _, t := range types {
			if c.Type != "application" && c.Type != "*" {
				continue
			}
			if c.SubType != t.subType && c.SubType != "*" {
				continue
			}
			return t, true
		}
	}
	return openAPIType{}, false
}

func (o *OpenAPI) logError(msg string, args ...any) {
	o.mu.Lock()
	logger := o.logger
	o.mu.Unlock()
	logger.Error(msg, args...)
}

// serveV2 serves /openapi/v2 (gzipped by the caller, as upstream).
func (o *OpenAPI) serveV2(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	t, ok := negotiateOpenAPI(acceptClauses(r), v2Types)
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	enc, err := o.v2Document()
	body := enc.js
	if err == nil && t.protobuf {
		body, err = o.v2Protobuf(enc.js, enc.gen)
	}
	if err != nil {
		// kube-openapi answers 503 with no body when it has no
		// document to serve.
		o.logError("openapi v2", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", t.contentType)
	// The protobuf form has the JSON's ETag, as upstream.
	w.Header().Set("Etag", strconv.Quote(enc.etag))
	if v2Precompressible(w, r, body) {
		if gz, err := o.v2Gzip(enc.gen, t.protobuf, body); err == nil {
			// gziphandler passes a body through when its handler chose
			// an encoding; http.ServeContent then sets no Content-Length,
			// and a 304 drops the Content-Encoding: the same response as
			// when gziphandler compresses the body itself.
			w.Header().Set("Content-Encoding", "gzip")
			body = gz
		} else {
			o.logError("openapi v2 gzip", "err", err)
		}
	}
	http.ServeContent(w, r, "/openapi/v2", enc.modTime, bytes.NewReader(body))
}

// v2Precompressible reports whether the v2 document can go out already
// compressed: w is gziphandler's (the client accepts gzip, and the body
// is large enough for gziphandler to compress it), and the request is a
// plain or If-None-Match / If-Modified-Since GET, whose answer is the
// whole body or a 304. A Range, If-Match or If-Unmodified-Since request
// and HEAD are left to gziphandler, which sees what ServeContent writes
// (a part, a 412, headers only) and compresses it or not as before.
func v2Precompressible(w http.ResponseWriter, r *http.Request, body []byte) bool {
	switch w.(type) {
	case *gziphandler.GzipResponseWriter, gziphandler.GzipResponseWriterWithCloseNotify:
	default:
		return false
	}
	return r.Method == http.MethodGet && len(body) >= gziphandler.DefaultMinSize &&
		r.Header.Get("Range") == "" && r.Header.Get("If-Match") == "" && r.Header.Get("If-Unmodified-Since") == ""
}

// v2Gzip returns body, the v2 document of generation gen in JSON or
// protobuf, compressed as gziphandler compresses it (the default level,
// no name or time in the header: the same bytes), once per generation
// and form. kubectl without an HTTP cache (a fresh HOME, as in CI) asks
// for the whole document on every apply or explain; compressing a few
// MiB each time cost more than encoding it.
func (o *OpenAPI) v2Gzip(gen uint64, protobuf bool, body []byte) ([]byte, error) {
	o.mu.Lock()
	if c := o.v2Gz; c.gen == gen {
		if gz := c.of(protobuf); gz != nil {
			o.mu.Unlock()
			return gz, nil
		}
	}
	o.mu.Unlock()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	gz := buf.Bytes()
	o.mu.Lock()
	switch {
	case o.v2Gz.gen == gen:
	case o.v2Gz.gen < gen:
		o.v2Gz = v2Gzipped{gen: gen}
	default: // a newer generation is cached; gen is older
		o.mu.Unlock()
		return gz, nil
	}
	if protobuf {
		o.v2Gz.pb = gz
	} else {
		o.v2Gz.js = gz
	}
	o.mu.Unlock()
	return gz, nil
}

// v2Gzipped holds the compressed forms of one generation of the v2
// document, each made when first asked for.
type v2Gzipped struct {
	gen    uint64
	js, pb []byte
}

func (c v2Gzipped) of(protobuf bool) []byte {
	if protobuf {
		return c.pb
	}
	return c.js
}

func hashOf(b []byte) string { return fmt.Sprintf("%X", sha512.Sum512(b)) }

// v3URL is the address of a v3 document under its hash, as the index
// lists it and a stale hash is redirected to.
func v3URL(gvPath, hash string) string {
	u := url.URL{Path: path.Join("/openapi/v3", gvPath), RawQuery: url.Values{"hash": {hash}}.Encode()}
	return u.String()
}

// serveV3Index serves the index at /openapi/v3: every document's address
// under its hash.
func (o *OpenAPI) serveV3Index(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	docs := make(map[string]*v3Doc, len(o.v3))
	for k, d := range o.v3 {
		docs[k] = d
	}
	o.mu.Unlock()
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	paths := make(map[string]entry, len(docs))
	for k, d := range docs {
		_, h, err := d.get()
		if err != nil {
			// Left out of the index: its URL would only answer 500.
			o.logError("openapi v3 document", "path", k, "err", err)
			continue
		}
		paths[k] = entry{ServerRelativeURL: v3URL(k, h)}
	}
	body, err := json.Marshal(map[string]any{"paths": paths})
	if err != nil {
		o.logError("openapi v3 index", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	// kube-aggregator serves the index with http.ServeContent, modified
	// now, no ETag and no Content-Type, whatever the Accept header: Go
	// sniffs the JSON as "text/plain; charset=utf-8". Clients (client-go's
	// openapi3 root) parse it whatever its type, so it is matched.
	http.ServeContent(w, r, "/openapi/v3", time.Now(), bytes.NewReader(body))
}

// serveV3 serves the v3 document of the group-version path after
// "/openapi/v3/".
func (o *OpenAPI) serveV3(w http.ResponseWriter, r *http.Request) {
	gv := strings.TrimPrefix(r.URL.Path, "/openapi/v3/")
	o.mu.Lock()
	d, ok := o.v3[gv]
	o.mu.Unlock()
	if !ok {
		// kube-aggregator's answer for a group-version it does not
		// know, before any negotiation: no body.
		w.WriteHeader(http.StatusNotFound)
		return
	}
	clauses := acceptClauses(r)
	if len(clauses) == 0 {
		// An Accept header with no media range in it ("json", say):
		// handler3 returns without writing. kube-apiserver v1.37.2
		// answered 200 with no body and no Vary header.
		return
	}
	w.Header().Add("Vary", "Accept")
	t, ok := negotiateOpenAPI(clauses, v3Types)
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	doc, h, err := d.get()
	if err != nil {
		http.Error(w, fmt.Sprintf("openapi v3 document %s: %v", gv, err), http.StatusInternalServerError)
		return
	}
	hash := r.URL.Query().Get("hash")
	body := doc
	if t.protobuf && (hash == "" || hash == h) {
		if body, err = d.protobuf(); err != nil {
			o.logError("openapi v3 protobuf", "path", gv, "err", err)
			http.Error(w, fmt.Sprintf("openapi v3 document %s: protobuf: %v", gv, err), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", t.contentType)
	// Both forms have the JSON's hash as ETag, as upstream.
	w.Header().Set("Etag", strconv.Quote(h))
	if hash != "" {
		if hash != h {
			// A stale address: to the current one. With Content-Type
			// set, http.Redirect writes no body, as upstream's.
			http.Redirect(w, r, v3URL(gv, h), http.StatusMovedPermanently)
			return
		}
		// Immutable under its hash: cacheable for a year from now,
		// formatted as upstream does (RFC 1123, the server's zone).
		w.Header().Set("Vary", "Accept")
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	http.ServeContent(w, r, "", d.modTime, bytes.NewReader(body))
}
