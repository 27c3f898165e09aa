package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NYTimes/gziphandler"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// openAPIServeFixture is a mux serving a v2 document larger than
// gziphandler's 1400-byte threshold and one v3 document, apis/apps/v1.
func openAPIServeFixture(t *testing.T) (*OpenAPI, *PathMux) {
	t.Helper()
	o := NewOpenAPI("Kubernetes", "v1.37.2")
	defs := map[string]any{}
	for i := range 40 {
		defs[fmt.Sprintf("io.k8s.api.apps.v1.Thing%02d", i)] = map[string]any{"type": "object", "description": "a thing of the apps group"}
	}
	o.MergeV2(map[string]any{"/apis/apps/v1/": map[string]any{"get": map[string]any{"operationId": "getAppsV1APIResources", "responses": map[string]any{"200": map[string]any{"description": "OK"}}}}}, defs)
	o.SetV3("apis/apps/v1", []byte(`{"openapi":"3.0.0","info":{"title":"Kubernetes","version":"v1.37.2"},"paths":{"/apis/apps/v1/":{"get":{"operationId":"getAppsV1APIResources","responses":{"200":{"description":"OK"}}}}},"components":{}}`))
	mux := NewPathMux("test")
	o.install(mux)
	return o, mux
}

func serveOpenAPI(mux http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, r)
	return rec
}

// The Accept header chooses JSON or protobuf as kube-openapi's handlers
// do (goautoneg: "*" wildcards match, q=0 does not exclude); anything
// else is a 406 with no body and no Content-Type. Every expectation is
// what kube-apiserver v1.37.2 answered to the same Accept header.
func TestOpenAPIAcceptNegotiation(t *testing.T) {
	_, mux := openAPIServeFixture(t)
	const (
		js      = "application/json"
		v2Proto = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
		v3Proto = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	)
	for _, tc := range []struct {
		path, accept string
		code         int
		contentType  string // "" for none
	}{
		{"/openapi/v2", "", 200, js},
		{"/openapi/v2", "*/*", 200, js},
		{"/openapi/v2", "application/*", 200, js},
		{"/openapi/v2", "application/json;q=0", 200, js},
		{"/openapi/v2", "application/json;q=0.9, text/html", 200, js},
		{"/openapi/v2", "text/html", 406, ""},
		{"/openapi/v2", "application/yaml", 406, ""},
		{"/openapi/v2", "json", 406, ""},
		{"/openapi/v2", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf", 406, ""},
		{"/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 200, v2Proto},
		{"/openapi/v2", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", 200, v2Proto},
		{"/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json", 200, v2Proto},
		{"/openapi/v2", "text/html, application/com.github.proto-openapi.spec.v3.v1.0+protobuf;q=0.5, */*;q=0.1", 200, js},
		{"/openapi/v3/apis/apps/v1", "", 200, js},
		{"/openapi/v3/apis/apps/v1", "application/*", 200, js},
		{"/openapi/v3/apis/apps/v1", "application/json;q=0", 200, js},
		{"/openapi/v3/apis/apps/v1", "text/html", 406, ""},
		{"/openapi/v3/apis/apps/v1", "application/yaml", 406, ""},
		{"/openapi/v3/apis/apps/v1", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 406, ""},
		{"/openapi/v3/apis/apps/v1", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf", 200, v3Proto},
		{"/openapi/v3/apis/apps/v1", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf", 200, v3Proto},
		{"/openapi/v3/apis/apps/v1", "text/html, application/com.github.proto-openapi.spec.v3.v1.0+protobuf;q=0.5, */*;q=0.1", 200, v3Proto},
	} {
		rec := serveOpenAPI(mux, http.MethodGet, tc.path, "Accept", tc.accept)
		got := rec.Result()
		if got.StatusCode != tc.code || got.Header.Get("Content-Type") != tc.contentType {
			t.Errorf("GET %s Accept %q: %d %q, want %d %q", tc.path, tc.accept, got.StatusCode, got.Header.Get("Content-Type"), tc.code, tc.contentType)
		}
		if tc.code == 406 && rec.Body.Len() != 0 {
			t.Errorf("GET %s Accept %q: 406 with body %q, want none", tc.path, tc.accept, rec.Body)
		}
		if tc.code == 200 && rec.Body.Len() == 0 {
			t.Errorf("GET %s Accept %q: 200 with no body", tc.path, tc.accept)
		}
	}

	// An Accept header with no media range: handler3 writes nothing.
	// kube-apiserver v1.37.2 answered 200, no body, no Vary.
	rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v3/apis/apps/v1", "Accept", "json")
	if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Vary") != "" || rec.Header().Get("Content-Type") != "" {
		t.Errorf("v3 Accept json: %d %v %q, want 200, no body, no Vary", rec.Code, rec.Header(), rec.Body)
	}
}

// The protobuf v3 document is what kube-openapi's handler3 makes of the
// JSON: gnostic's openapi_v3 parse, proto.Marshal. Its ETag is the JSON's.
func TestOpenAPIV3Protobuf(t *testing.T) {
	_, mux := openAPIServeFixture(t)
	jsRec := serveOpenAPI(mux, http.MethodGet, "/openapi/v3/apis/apps/v1")
	doc, err := openapi_v3.ParseDocument(jsRec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want, err := proto.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // made once, served twice
		rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v3/apis/apps/v1", "Accept", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
		if !bytes.Equal(rec.Body.Bytes(), want) {
			t.Fatalf("protobuf document: %d bytes, want the %d of the JSON's", rec.Body.Len(), len(want))
		}
		var got openapi_v3.Document
		if err := proto.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Openapi != "3.0.0" || got.Info.GetTitle() != "Kubernetes" {
			t.Fatalf("protobuf document decodes to %v (%v)", &got, err)
		}
		if e := rec.Header().Get("Etag"); e == "" || e != jsRec.Header().Get("Etag") {
			t.Errorf("protobuf ETag %q, want the JSON's %q", e, jsRec.Header().Get("Etag"))
		}
	}
}

// Both documents go out through http.ServeContent as upstream's: a
// matching If-None-Match is a 304, Range requests a 206, with
// Accept-Ranges, Last-Modified and Vary as kube-apiserver v1.37.2 sends
// them ("Vary: Accept-Encoding" then "Vary: Accept" on v2, "Vary: Accept"
// on v3).
func TestOpenAPIConditionalAndRangeRequests(t *testing.T) {
	o, mux := openAPIServeFixture(t)
	for _, tc := range []struct {
		path string
		vary []string
	}{
		{"/openapi/v2", []string{"Accept-Encoding", "Accept"}},
		{"/openapi/v3/apis/apps/v1", []string{"Accept"}},
	} {
		full := serveOpenAPI(mux, http.MethodGet, tc.path)
		h := full.Header()
		etag := h.Get("Etag")
		if full.Code != 200 || !strings.HasPrefix(etag, `"`) || len(etag) != 128+2 {
			t.Fatalf("GET %s: %d, ETag %q, want 200 and a quoted SHA-512", tc.path, full.Code, etag)
		}
		if h.Get("Accept-Ranges") != "bytes" || h.Get("Content-Length") != strconv.Itoa(full.Body.Len()) {
			t.Errorf("GET %s: Accept-Ranges %q Content-Length %q (body %d)", tc.path, h.Get("Accept-Ranges"), h.Get("Content-Length"), full.Body.Len())
		}
		if lm, err := http.ParseTime(h.Get("Last-Modified")); err != nil || time.Since(lm) > time.Minute || time.Until(lm) > time.Second {
			t.Errorf("GET %s: Last-Modified %q (%v), want when the document was made", tc.path, h.Get("Last-Modified"), err)
		}
		if !slices.Equal(h.Values("Vary"), tc.vary) {
			t.Errorf("GET %s: Vary %q, want %q", tc.path, h.Values("Vary"), tc.vary)
		}
		if h.Get("Cache-Control") != "" || h.Get("Expires") != "" {
			t.Errorf("GET %s without a hash: Cache-Control %q Expires %q, want neither", tc.path, h.Get("Cache-Control"), h.Get("Expires"))
		}

		rec := serveOpenAPI(mux, http.MethodGet, tc.path, "If-None-Match", etag)
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("Etag") != etag {
			t.Errorf("GET %s If-None-Match its ETag: %d (%d bytes), ETag %q, want 304", tc.path, rec.Code, rec.Body.Len(), rec.Header().Get("Etag"))
		}
		if rec := serveOpenAPI(mux, http.MethodGet, tc.path, "If-None-Match", `"0123"`); rec.Code != 200 {
			t.Errorf("GET %s If-None-Match another ETag: %d, want 200", tc.path, rec.Code)
		}

		rec = serveOpenAPI(mux, http.MethodGet, tc.path, "Range", "bytes=0-10")
		wantRange := fmt.Sprintf("bytes 0-10/%d", full.Body.Len())
		if rec.Code != http.StatusPartialContent || !bytes.Equal(rec.Body.Bytes(), full.Body.Bytes()[:11]) || rec.Header().Get("Content-Range") != wantRange {
			t.Errorf("GET %s Range bytes=0-10: %d %q Content-Range %q, want 206 %q %q", tc.path, rec.Code, rec.Body, rec.Header().Get("Content-Range"), full.Body.Bytes()[:11], wantRange)
		}

		rec = serveOpenAPI(mux, http.MethodHead, tc.path)
		if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != strconv.Itoa(full.Body.Len()) {
			t.Errorf("HEAD %s: %d, %d bytes, Content-Length %q", tc.path, rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
		}
	}

	// A change makes a new v2 document: the old ETag no longer matches.
	old := serveOpenAPI(mux, http.MethodGet, "/openapi/v2").Header().Get("Etag")
	o.MergeV2(nil, map[string]any{"io.k8s.api.apps.v1.New": map[string]any{"type": "object"}})
	if rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "If-None-Match", old); rec.Code != 200 || rec.Header().Get("Etag") == old {
		t.Errorf("GET /openapi/v2 If-None-Match the ETag before a change: %d, ETag %q, want 200 and a new ETag", rec.Code, rec.Header().Get("Etag"))
	}
}

// kube-openapi gzips /openapi/v2 for clients that accept it, v3 not
// (kube-apiserver v1.37.2: Content-Encoding gzip on v2 only).
func TestOpenAPIV2Gzip(t *testing.T) {
	_, mux := openAPIServeFixture(t)
	plain := serveOpenAPI(mux, http.MethodGet, "/openapi/v2")
	rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "Accept-Encoding", "gzip")
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("Content-Length") != "" {
		t.Fatalf("v2 with Accept-Encoding gzip: Content-Encoding %q Content-Length %q, want gzip and none", rec.Header().Get("Content-Encoding"), rec.Header().Get("Content-Length"))
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain.Body.Bytes()) {
		t.Errorf("gunzipped v2 (%d bytes) is not the plain document (%d bytes)", len(got), plain.Body.Len())
	}
	// A 206 of 11 bytes is under the threshold: not compressed.
	if rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "Accept-Encoding", "gzip", "Range", "bytes=0-10"); rec.Code != 206 || rec.Header().Get("Content-Encoding") != "" || rec.Body.Len() != 11 {
		t.Errorf("v2 gzip Range bytes=0-10: %d, Content-Encoding %q, %d bytes; want a plain 206 of 11", rec.Code, rec.Header().Get("Content-Encoding"), rec.Body.Len())
	}
	// The protobuf form too.
	pb := serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "Accept-Encoding", "gzip", "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	zr, err = gzip.NewReader(pb.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	var d openapi_v2.Document
	if err := proto.Unmarshal(got, &d); err != nil || d.Swagger != "2.0" {
		t.Errorf("gunzipped v2 protobuf decodes to swagger %q (%v)", d.Swagger, err)
	}
	if rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v3/apis/apps/v1", "Accept-Encoding", "gzip"); rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("v3 document gzipped, want plain as upstream")
	}
}

// A v3 document asked for under a stale hash is redirected to its
// current address; under its hash it is immutable for a year. As
// kube-apiserver v1.37.2 answered: 301, Location
// /openapi/v3/apis/apps/v1?hash=<current>, Content-Type application/json,
// no body; then Cache-Control "public, immutable", Expires a year from
// now (RFC 1123), and a 304 to If-None-Match with those headers.
func TestOpenAPIV3Hash(t *testing.T) {
	_, mux := openAPIServeFixture(t)
	etag := serveOpenAPI(mux, http.MethodGet, "/openapi/v3/apis/apps/v1").Header().Get("Etag")
	hash, err := strconv.Unquote(etag)
	if err != nil {
		t.Fatal(err)
	}
	current := "/openapi/v3/apis/apps/v1?hash=" + hash
	for _, accept := range []string{"", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"} {
		rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v3/apis/apps/v1?hash=abc", "Accept", accept)
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != current || rec.Body.Len() != 0 {
			t.Errorf("stale hash (Accept %q): %d Location %q body %q, want 301 to %s and no body", accept, rec.Code, rec.Header().Get("Location"), rec.Body, current)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/") || rec.Header().Get("Cache-Control") != "" {
			t.Errorf("stale hash (Accept %q): Content-Type %q Cache-Control %q", accept, ct, rec.Header().Get("Cache-Control"))
		}
	}

	// The index names the current address.
	if idx := serveOpenAPI(mux, http.MethodGet, "/openapi/v3"); !strings.Contains(idx.Body.String(), `"serverRelativeURL":"`+current+`"`) {
		t.Errorf("index %s does not name %s", idx.Body, current)
	}

	before := time.Now()
	rec := serveOpenAPI(mux, http.MethodGet, current)
	after := time.Now()
	if rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, immutable" || !slices.Equal(rec.Header().Values("Vary"), []string{"Accept"}) {
		t.Errorf("current hash: %d Cache-Control %q Vary %q", rec.Code, rec.Header().Get("Cache-Control"), rec.Header().Values("Vary"))
	}
	exp, err := time.Parse(time.RFC1123, rec.Header().Get("Expires"))
	if err != nil {
		t.Fatalf("Expires %q: %v", rec.Header().Get("Expires"), err)
	}
	if lo, hi := before.AddDate(1, 0, 0).Truncate(time.Second), after.AddDate(1, 0, 0); exp.Before(lo) || exp.After(hi) {
		t.Errorf("Expires %s, want a year from the request (%s..%s)", exp, lo, hi)
	}
	rec = serveOpenAPI(mux, http.MethodGet, current, "If-None-Match", etag)
	if rec.Code != http.StatusNotModified || rec.Header().Get("Cache-Control") != "public, immutable" || rec.Header().Get("Expires") == "" {
		t.Errorf("current hash If-None-Match: %d %v, want 304 with the caching headers", rec.Code, rec.Header())
	}
}

// The index is served as kube-aggregator serves it: no Content-Type set,
// so Go sniffs "text/plain; charset=utf-8", whatever the Accept header;
// Last-Modified now and no ETag. Unknown group-versions, and the paths
// "/openapi/v3/" and "<document>/", are a 404 with no body. As
// kube-apiserver v1.37.2 answered.
func TestOpenAPIV3IndexAndNotFound(t *testing.T) {
	_, mux := openAPIServeFixture(t)
	for _, accept := range []string{"", "application/json", "text/html"} {
		rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v3", "Accept", accept)
		h := rec.Header()
		if rec.Code != 200 || h.Get("Content-Type") != "text/plain; charset=utf-8" || h.Get("Etag") != "" || h.Get("Accept-Ranges") != "bytes" {
			t.Errorf("index Accept %q: %d %v", accept, rec.Code, h)
		}
		if lm, err := http.ParseTime(h.Get("Last-Modified")); err != nil || time.Since(lm) > time.Minute {
			t.Errorf("index Last-Modified %q (%v), want now", h.Get("Last-Modified"), err)
		}
		if !strings.HasPrefix(rec.Body.String(), `{"paths":{"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=`) {
			t.Errorf("index body %s", rec.Body)
		}
	}
	for _, p := range []string{"/openapi/v3/apis/nope/v1", "/openapi/v3/", "/openapi/v3/apis/apps/v1/"} {
		rec := serveOpenAPI(mux, http.MethodGet, p)
		if rec.Code != 404 || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" || rec.Header().Get("Vary") != "" {
			t.Errorf("GET %s: %d %v %q, want a bare 404", p, rec.Code, rec.Header(), rec.Body)
		}
	}
}

// The v2 document goes out compressed once per generation and form, and
// every response is the one gziphandler gives when it compresses the
// body itself (what kube-openapi does, and kapi did before): the same
// status, headers and gzip bytes, for every kind of request, through
// both of gziphandler's writers (a recorder, and an HTTP/1.1 server's
// CloseNotifier). The reference below hides gziphandler's writer type
// from serveV2, so it takes the old path.
func TestOpenAPIV2GzipOnceAsGziphandler(t *testing.T) {
	o, mux := openAPIServeFixture(t)
	ref := gziphandler.GzipHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.serveV2(struct{ http.ResponseWriter }{w}, r)
	}))
	const pbType = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	etag := serveOpenAPI(mux, http.MethodGet, "/openapi/v2").Header().Get("Etag")
	lastMod := serveOpenAPI(mux, http.MethodGet, "/openapi/v2").Header().Get("Last-Modified")
	requests := [][]string{
		{"Accept-Encoding", "gzip"},
		{"Accept-Encoding", "gzip", "Accept", pbType},
		{"Accept-Encoding", "gzip;q=0.5, br"},
		{"Accept-Encoding", "gzip;q=0"},
		{"Accept-Encoding", "gzip", "If-None-Match", etag},
		{"Accept-Encoding", "gzip", "If-None-Match", `"0123"`},
		{"Accept-Encoding", "gzip", "If-Modified-Since", lastMod},
		{"Accept-Encoding", "gzip", "If-Match", `"0123"`},
		{"Accept-Encoding", "gzip", "If-Unmodified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"},
		{"Accept-Encoding", "gzip", "Range", "bytes=0-10"},
		{"Accept-Encoding", "gzip", "Range", "bytes=0-3000"},
		{},
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		for _, h := range requests {
			got, want := serveOpenAPI(mux, method, "/openapi/v2", h...), serveOpenAPI(ref, method, "/openapi/v2", h...)
			if got.Code != want.Code || !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("%s %q: got %d %v (%d bytes), want gziphandler's %d %v (%d bytes)", method, h, got.Code, got.Header(), got.Body.Len(), want.Code, want.Header(), want.Body.Len())
			}
		}
	}

	// Through a server: gziphandler's CloseNotifier writer. (The
	// fixture's document compresses to a few hundred bytes, so the server
	// adds a Content-Length to both.)
	for _, accept := range []string{"application/json", pbType} {
		var resps [2]*http.Response
		var bodies [2][]byte
		for i, handler := range []http.Handler{mux, ref} {
			srv := httptest.NewServer(handler)
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/openapi/v2", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", accept)
			req.Header.Set("Accept-Encoding", "gzip")
			resps[i], err = (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			bodies[i], err = io.ReadAll(resps[i].Body)
			resps[i].Body.Close()
			srv.Close()
			if err != nil {
				t.Fatal(err)
			}
			resps[i].Header.Del("Date")
		}
		if resps[0].Header.Get("Content-Encoding") != "gzip" || !maps.EqualFunc(resps[0].Header, resps[1].Header, slices.Equal) || !bytes.Equal(bodies[0], bodies[1]) {
			t.Errorf("Accept %s through a server: %v, %d bytes; gziphandler's %v, %d bytes", accept, resps[0].Header, len(bodies[0]), resps[1].Header, len(bodies[1]))
		}
	}

	// Compressed once per generation and form: the next request gets the
	// same bytes; a change makes a new document, compressed anew.
	first := o.v2Gz.js
	if serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "Accept-Encoding", "gzip"); len(first) == 0 || &o.v2Gz.js[0] != &first[0] {
		t.Errorf("the JSON document was compressed again for the same generation")
	}
	o.MergeV2(nil, map[string]any{"io.k8s.api.apps.v1.New": map[string]any{"type": "object"}})
	plain := serveOpenAPI(mux, http.MethodGet, "/openapi/v2")
	zr, err := gzip.NewReader(serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "Accept-Encoding", "gzip").Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, plain.Body.Bytes()) || !bytes.Contains(got, []byte("io.k8s.api.apps.v1.New")) {
		t.Errorf("after a change, the gzipped document (%d bytes, %v) is not the new plain one (%d bytes)", len(got), err, plain.Body.Len())
	}
}

// BenchmarkOpenAPIV2Gzip serves the v2 document to a client accepting
// gzip, as kubectl without an HTTP cache asks for it.
func BenchmarkOpenAPIV2Gzip(b *testing.B) {
	o := NewOpenAPI("Kubernetes", "v1.37.2")
	defs := map[string]any{}
	for i := range 2000 {
		defs[fmt.Sprintf("io.k8s.api.apps.v1.Thing%04d", i)] = map[string]any{"type": "object", "description": fmt.Sprintf("thing %d of the apps group, with a description of the usual length", i)}
	}
	o.MergeV2(nil, defs)
	mux := NewPathMux("bench")
	o.install(mux)
	b.ReportAllocs()
	for b.Loop() {
		if rec := serveOpenAPI(mux, http.MethodGet, "/openapi/v2", "Accept-Encoding", "gzip"); rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
