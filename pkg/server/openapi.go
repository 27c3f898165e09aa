package server

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/NYTimes/gziphandler"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// OpenAPI holds the OpenAPI documents a server serves at /openapi/v2 and
// /openapi/v3. Resources register their definitions and paths through it;
// until then the documents are valid and empty.
//
// v2 is served as JSON or, when asked, as the protobuf that client-go's
// discovery client requests. v3 is an index of per-group-version documents,
// each addressed with a hash so clients can cache it, each in JSON or
// protobuf. Both are served with kube-apiserver's HTTP semantics (Accept
// negotiation, ETags, hash redirects, Range): see openapi_serve.go.
//
// Nothing is encoded when content is registered: a v3 document registered
// with [OpenAPI.SetV3Func] is built on its first request, contributions
// added with [OpenAPI.AddV2Source] are computed when the v2 document is
// first needed, and the v2 document is encoded again only when it is
// served after a change. Registering content therefore costs a server's
// start (and a CRD's creation) almost nothing, however big the documents.
// Each path, definition and parameter of v2 keeps its own JSON and
// protobuf encodings (see v2Entry), so encoding the document again after a
// change (a CRD created, say) re-encodes only what changed.
type OpenAPI struct {
	title, version string
	// bearerToken declares the BearerToken security scheme in v2.
	bearerToken bool

	mu sync.Mutex
	// v2 content: paths, definitions and shared parameters (the
	// "#/parameters/..." an aggregated server's paths may reference).
	v2, v2Defs, v2Params map[string]*v2Entry
	// v2Sources are contributions not computed yet.
	v2Sources []V2Source
	// v2Parts are replaceable contributions, by key, each computed once.
	v2Parts map[string]*v2Part
	// v2JSON is the encoded v2 document, nil when stale; v2Proto its
	// protobuf form, nil until asked for. v2Gen counts the encodings, so
	// a protobuf form is only kept for the encoding it was made from.
	v2JSON, v2Proto []byte
	v2ETag          string
	v2Gen           uint64
	// v2Time is when v2JSON was encoded: the document's Last-Modified.
	v2Time time.Time
	// v2Doc is what v2JSON was encoded from (of generation v2Gen).
	v2Doc *v2Contents
	// v2Gz holds the gzipped forms of the latest generation asked for.
	v2Gz v2Gzipped
	v3   map[string]*v3Doc // "apis/apps/v1" -> document

	logger *slog.Logger
}

// V2Source computes a part of the v2 document: paths, definitions and
// the shared parameters ("#/parameters/<name>") the paths reference
// (JSON values, or values that encode to them).
type V2Source = func() (paths, definitions, parameters map[string]any, err error)

// v2Part is one replaceable contribution to the v2 document.
type v2Part struct {
	once                sync.Once
	build               V2Source
	paths, defs, params map[string]*v2Entry
	err                 error
}

func (p *v2Part) get() (paths, defs, params map[string]*v2Entry, err error) {
	p.once.Do(func() {
		var ps, ds, prs map[string]any
		ps, ds, prs, p.err = p.build()
		p.paths, p.defs, p.params = newV2Entries(ps), newV2Entries(ds), newV2Entries(prs)
		p.build = nil
	})
	return p.paths, p.defs, p.params, p.err
}

// v3Doc is one group-version's v3 document, built at most once, and its
// protobuf form, made at most once when asked for.
type v3Doc struct {
	once    sync.Once
	build   func() ([]byte, error)
	doc     []byte
	hash    string
	modTime time.Time // when built: the document's Last-Modified
	err     error

	pbOnce sync.Once
	pb     []byte
	pbErr  error
}

func (d *v3Doc) get() ([]byte, string, error) {
	d.once.Do(func() {
		d.doc, d.err = d.build()
		if d.err == nil {
			d.hash, d.modTime = hashOf(d.doc), time.Now()
		}
		d.build = nil
	})
	return d.doc, d.hash, d.err
}

// protobuf returns the document in gnostic's openapi_v3 protobuf form,
// as kube-openapi's handler3 makes it (parse the JSON, marshal); get must
// have succeeded.
func (d *v3Doc) protobuf() ([]byte, error) {
	d.pbOnce.Do(func() {
		doc, err := openapi_v3.ParseDocument(d.doc)
		if err != nil {
			d.pbErr = fmt.Errorf("parse: %w", err)
			return
		}
		if d.pb, err = proto.Marshal(doc); err != nil {
			d.pbErr = fmt.Errorf("marshal: %w", err)
		}
	})
	return d.pb, d.pbErr
}

// NewOpenAPI returns empty documents titled title (kube uses "Kubernetes").
func NewOpenAPI(title, version string) *OpenAPI {
	return &OpenAPI{
		title: title, version: version,
		v2: map[string]*v2Entry{}, v2Defs: map[string]*v2Entry{}, v2Params: map[string]*v2Entry{},
		v2Parts: map[string]*v2Part{},
		v3:      map[string]*v3Doc{},
		logger:  slog.Default(),
	}
}

// SetBearerTokenSecurity declares (or not) in the v2 document that every
// operation takes a bearer token ("security" and "securityDefinitions"),
// as kube-apiserver does when it authenticates tokens. The v3 documents
// declare it themselves (components.securitySchemes).
func (o *OpenAPI) SetBearerTokenSecurity(on bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bearerToken = on
	o.v2JSON = nil
}

// SetLogger sets the logger of build failures (default slog.Default()).
func (o *OpenAPI) SetLogger(l *slog.Logger) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.logger = l
}

// SetV3 sets the document of one group-version path (e.g. "api/v1",
// "apis/apps/v1"); nil removes it.
func (o *OpenAPI) SetV3(gvPath string, doc []byte) {
	if doc == nil {
		o.SetV3Func(gvPath, nil)
		return
	}
	o.SetV3Func(gvPath, func() ([]byte, error) { return doc, nil })
}

// SetV3Func sets the document of one group-version path to what build
// returns, called once, when the document (or the index, which names
// every document's hash) is first requested; nil removes it. build must
// be safe to call from any goroutine. An error is served as a 500 on
// every request for the document.
func (o *OpenAPI) SetV3Func(gvPath string, build func() ([]byte, error)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if build == nil {
		delete(o.v3, gvPath)
		return
	}
	o.v3[gvPath] = &v3Doc{build: build}
}

// AddV2Source adds a part of the v2 document, computed when the document
// is first served (or [OpenAPI.HasV2Definition] asks). A source's paths and
// definitions are kept for good: use it for content that never changes,
// such as built-in resources.
func (o *OpenAPI) AddV2Source(src V2Source) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.v2Sources = append(o.v2Sources, src)
	o.v2JSON = nil
}

// SetV2Func sets the part of the v2 document named key (a group-version,
// say) to the paths and definitions build returns, computed once, when
// the document is next needed; nil removes the part. Parts are kept
// apart: replacing or removing one never touches the paths and
// definitions of another, nor those [OpenAPI.MergeV2] added. A failing
// part is logged and left out. build must not call o.
func (o *OpenAPI) SetV2Func(key string, build V2Source) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if build == nil {
		delete(o.v2Parts, key)
	} else {
		o.v2Parts[key] = &v2Part{build: build}
	}
	o.v2JSON = nil
}

// MergeV2 adds paths and definitions to the v2 document.
func (o *OpenAPI) MergeV2(paths, definitions map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	setV2Entries(o.v2, paths)
	setV2Entries(o.v2Defs, definitions)
	o.v2JSON = nil
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
	o.v2JSON = nil
}

// MergeV2Parameters adds shared parameters (the document's "parameters",
// which paths reference as "#/parameters/<name>") to the v2 document.
func (o *OpenAPI) MergeV2Parameters(params map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	setV2Entries(o.v2Params, params)
	o.v2JSON = nil
}

// RemoveV2Parameters removes shared parameters from the v2 document.
func (o *OpenAPI) RemoveV2Parameters(names []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range names {
		delete(o.v2Params, k)
	}
	o.v2JSON = nil
}

// HasV2Definition reports whether the v2 document defines name.
func (o *OpenAPI) HasV2Definition(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.computeSourcesLocked()
	if _, ok := o.v2Defs[name]; ok {
		return true
	}
	for _, p := range o.v2Parts {
		if _, defs, _, err := p.get(); err == nil {
			if _, ok := defs[name]; ok {
				return true
			}
		}
	}
	return false
}

// HasV2Parameter reports whether the v2 document has the shared parameter
// name for good: from a source ([OpenAPI.AddV2Source]) or
// [OpenAPI.MergeV2Parameters]. The parameters of a part
// ([OpenAPI.SetV2Func]) go with it, so they do not count: whoever merges
// the same parameter keeps its own copy (a parameter's name is a hash of
// it, so the copies are equal).
func (o *OpenAPI) HasV2Parameter(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.computeSourcesLocked()
	_, ok := o.v2Params[name]
	return ok
}

// V3Paths returns the group-version paths of the v3 documents held
// ("api/v1", "apis/apps/v1", ...), sorted.
func (o *OpenAPI) V3Paths() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.v3))
	for k := range o.v3 {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// computeSourcesLocked merges the pending sources. A failing source is
// logged and left out: the rest of the document is still served.
func (o *OpenAPI) computeSourcesLocked() {
	for _, src := range o.v2Sources {
		paths, defs, params, err := src()
		if err != nil {
			o.logger.Error("openapi v2 source", "err", err)
			continue
		}
		setV2Entries(o.v2, paths)
		setV2Entries(o.v2Defs, defs)
		setV2Entries(o.v2Params, params)
	}
	o.v2Sources = nil
}

// v2Encoding is one encoding of the v2 document.
type v2Encoding struct {
	js   []byte
	etag string
	gen  uint64
	// modTime is when it was encoded.
	modTime time.Time
}

// v2Document returns the encoded v2 document, encoding it again if it
// changed since the last call.
func (o *OpenAPI) v2Document() (v2Encoding, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.v2JSON != nil {
		return v2Encoding{o.v2JSON, o.v2ETag, o.v2Gen, o.v2Time}, nil
	}
	o.computeSourcesLocked()
	paths, defs, params := o.v2, o.v2Defs, o.v2Params
	if len(o.v2Parts) > 0 {
		paths = make(map[string]*v2Entry, len(o.v2)+8*len(o.v2Parts))
		defs = make(map[string]*v2Entry, len(o.v2Defs)+2*len(o.v2Parts))
		params = maps.Clone(o.v2Params)
		maps.Copy(paths, o.v2)
		maps.Copy(defs, o.v2Defs)
		// In key order, so that of two parts naming the same path or
		// definition the same one wins every time. A shared parameter's
		// name says what it is (a hash of it): the first copy is kept.
		for _, key := range slices.Sorted(maps.Keys(o.v2Parts)) {
			ps, ds, prs, err := o.v2Parts[key].get()
			if err != nil {
				o.logger.Error("openapi v2 part", "part", key, "err", err)
				continue
			}
			maps.Copy(paths, ps)
			maps.Copy(defs, ds)
			for k, v := range prs {
				if _, ok := params[k]; !ok {
					params[k] = v
				}
			}
		}
	}
	c := newV2Contents(o.title, o.version, o.bearerToken, paths, defs, params)
	js, err := c.encodeJSON()
	if err != nil {
		return v2Encoding{}, fmt.Errorf("encode openapi v2: %w", err)
	}
	o.v2Gen++
	o.v2JSON, o.v2Proto, o.v2ETag, o.v2Doc, o.v2Time = js, nil, hashOf(js), c, time.Now()
	return v2Encoding{js, o.v2ETag, o.v2Gen, o.v2Time}, nil
}

// v2Protobuf returns the protobuf form of js, the v2 document of
// generation gen, computed once per generation.
func (o *OpenAPI) v2Protobuf(js []byte, gen uint64) ([]byte, error) {
	o.mu.Lock()
	if o.v2Gen == gen && o.v2Proto != nil {
		pb := o.v2Proto
		o.mu.Unlock()
		return pb, nil
	}
	var c *v2Contents
	if o.v2Gen == gen {
		c = o.v2Doc
	}
	o.mu.Unlock()
	var pb []byte
	var err error
	if c != nil {
		pb, err = c.encodeProtobuf()
	} else {
		pb, err = protobufOfV2(js) // a newer generation exists; js is older
	}
	if err != nil {
		return nil, fmt.Errorf("openapi v2 protobuf: %w", err)
	}
	o.mu.Lock()
	if o.v2Gen == gen && o.v2JSON != nil {
		o.v2Proto = pb
	}
	o.mu.Unlock()
	return pb, nil
}

// install registers the OpenAPI routes on mux.
func (o *OpenAPI) install(mux *PathMux) {
	// kube-openapi gzips /openapi/v2 (not v3) with NYTimes' gziphandler:
	// a body of 1400 bytes or more, at the default level, adding "Vary:
	// Accept-Encoding" before the handler's "Vary: Accept".
	mux.Handle("/openapi/v2", gziphandler.GzipHandler(http.HandlerFunc(o.serveV2)))
	mux.Handle("/openapi/v3", http.HandlerFunc(o.serveV3Index))
	mux.HandlePrefix("/openapi/v3/", http.HandlerFunc(o.serveV3))
}
