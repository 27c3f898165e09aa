package server

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// OpenAPI holds the OpenAPI documents a server serves at /openapi/v2 and
// /openapi/v3. Resources register their definitions and paths through it;
// until then the documents are valid and empty.
//
// v2 is served as JSON or, when asked, as the protobuf that client-go's
// discovery client requests. v3 is an index of per-group-version documents,
// each addressed with a hash so clients can cache it.
type OpenAPI struct {
	title, version string

	mu     sync.RWMutex
	v2     map[string]any // paths
	v2Defs map[string]any
	v3     map[string][]byte // "apis/apps/v1" -> document JSON
	// The v2 document is built on the first request after a change (nil
	// until then), the protobuf form on the first request for it: a burst
	// of changes (every CRD served at start) pays for one build, not one
	// per change.
	v2JSON, v2Proto []byte
	v2ProtoBuilt    bool // v2Proto is up to date (nil: not convertible)
}

// NewOpenAPI returns empty documents titled title (kube uses "Kubernetes").
func NewOpenAPI(title, version string) *OpenAPI {
	return &OpenAPI{title: title, version: version, v2: map[string]any{}, v2Defs: map[string]any{}, v3: map[string][]byte{}}
}

// SetV3 sets the document of one group-version path (e.g. "api/v1",
// "apis/apps/v1"); nil removes it.
func (o *OpenAPI) SetV3(gvPath string, doc []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if doc == nil {
		delete(o.v3, gvPath)
		return
	}
	o.v3[gvPath] = doc
}

// MergeV2 adds paths and definitions to the v2 document.
func (o *OpenAPI) MergeV2(paths, definitions map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, v := range paths {
		o.v2[k] = v
	}
	for k, v := range definitions {
		o.v2Defs[k] = v
	}
	o.invalidateV2()
}

// RemoveV2 removes paths and definitions from the v2 document (names not
// present are ignored).
func (o *OpenAPI) RemoveV2(paths, definitions []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range paths {
		delete(o.v2, k)
	}
	for _, k := range definitions {
		delete(o.v2Defs, k)
	}
	o.invalidateV2()
}

// HasV2Definition reports whether the v2 document defines name.
func (o *OpenAPI) HasV2Definition(name string) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	_, ok := o.v2Defs[name]
	return ok
}

// V3Paths returns the group-version paths of the v3 documents held
// ("api/v1", "apis/apps/v1", ...), sorted.
func (o *OpenAPI) V3Paths() []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	out := make([]string, 0, len(o.v3))
	for k := range o.v3 {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// invalidateV2 drops the built v2 document; o.mu is held for writing.
func (o *OpenAPI) invalidateV2() {
	o.v2JSON, o.v2Proto, o.v2ProtoBuilt = nil, nil, false
}

// v2Document returns the v2 document as JSON and, when asked for, as
// protobuf (nil if it cannot be converted), building what a change
// dropped.
func (o *OpenAPI) v2Document(wantProto bool) (js, pb []byte) {
	o.mu.RLock()
	js, pb, built := o.v2JSON, o.v2Proto, o.v2ProtoBuilt
	o.mu.RUnlock()
	if js != nil && (built || !wantProto) {
		return js, pb
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.v2JSON == nil {
		doc := map[string]any{
			"swagger":     "2.0",
			"info":        map[string]any{"title": o.title, "version": o.version},
			"paths":       o.v2,
			"definitions": o.v2Defs,
		}
		b, err := json.Marshal(doc)
		if err != nil {
			panic(fmt.Sprintf("encode openapi v2: %v", err)) // only maps of JSON values get here
		}
		o.v2JSON = b
	}
	if wantProto && !o.v2ProtoBuilt {
		if d, err := openapi_v2.ParseDocument(o.v2JSON); err == nil {
			o.v2Proto, _ = proto.Marshal(d)
		}
		o.v2ProtoBuilt = true
	}
	return o.v2JSON, o.v2Proto
}

// The protobuf form is asked for with either name; the response names it
// with the parseable one (a media type may not contain "@"), as upstream.
const protoV2ContentType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

func (o *OpenAPI) serveV2(w http.ResponseWriter, r *http.Request) {
	wantProto := strings.Contains(r.Header.Get("Accept"), "com.github.proto-openapi.spec.v2")
	js, pb := o.v2Document(wantProto)
	etag := fmt.Sprintf("%X", sha512.Sum512(js))
	w.Header().Set("Etag", strconvQuote(etag))
	if wantProto && pb != nil {
		w.Header().Set("Content-Type", protoV2ContentType)
		_, _ = w.Write(pb)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(js)
}

func strconvQuote(s string) string { return `"` + s + `"` }

func hashOf(b []byte) string { return fmt.Sprintf("%X", sha512.Sum512(b)) }

// serveV3 serves the index at /openapi/v3 and the documents under it.
func (o *OpenAPI) serveV3(w http.ResponseWriter, r *http.Request) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	p := strings.TrimPrefix(r.URL.Path, "/openapi/v3")
	p = strings.Trim(p, "/")
	if p == "" {
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		paths := map[string]entry{}
		keys := make([]string, 0, len(o.v3))
		for k := range o.v3 {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			paths[k] = entry{ServerRelativeURL: "/openapi/v3/" + k + "?hash=" + hashOf(o.v3[k])}
		}
		body, _ := json.Marshal(map[string]any{"paths": paths})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
		return
	}
	doc, ok := o.v3[p]
	if !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	h := hashOf(doc)
	w.Header().Set("Etag", strconvQuote(h))
	if r.URL.Query().Get("hash") == h {
		// Immutable under its hash, as upstream.
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", "Thu, 31 Dec 2099 23:59:59 GMT")
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

// install registers the OpenAPI routes on mux.
func (o *OpenAPI) install(mux *PathMux) {
	mux.Handle("/openapi/v2", http.HandlerFunc(o.serveV2))
	mux.Handle("/openapi/v3", http.HandlerFunc(o.serveV3))
	mux.HandlePrefix("/openapi/v3/", http.HandlerFunc(o.serveV3))
}
