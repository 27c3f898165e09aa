package server

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestOpenAPIMergeAndRemoveV2(t *testing.T) {
	o := NewOpenAPI("Kubernetes", "v1.0.0")
	o.MergeV2(
		map[string]any{"/apis/example.com/v1/widgets": map[string]any{"get": map[string]any{"operationId": "listWidgets"}}},
		map[string]any{"com.example.v1.Widget": map[string]any{"type": "object"}, "com.example.v1.WidgetList": map[string]any{"type": "object"}},
	)
	o.RemoveV2([]string{"/apis/example.com/v1/widgets", "/absent"}, []string{"com.example.v1.WidgetList"})

	mux := NewPathMux("test")
	o.install(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil))
	var doc struct {
		Paths       map[string]any `json:"paths"`
		Definitions map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("decode /openapi/v2 (status %d): %v", rec.Code, err)
	}
	if len(doc.Paths) != 0 {
		t.Errorf("got paths %v, want none", doc.Paths)
	}
	if _, ok := doc.Definitions["com.example.v1.Widget"]; !ok || len(doc.Definitions) != 1 {
		t.Errorf("got definitions %v, want only com.example.v1.Widget", doc.Definitions)
	}

	o.SetV3("apis/b/v1", []byte(`{}`))
	o.SetV3("api/v1", []byte(`{}`))
	if got, want := o.V3Paths(), []string{"api/v1", "apis/b/v1"}; !slices.Equal(got, want) {
		t.Errorf("got v3 paths %v, want %v", got, want)
	}
}

// Documents are built when first asked for, once; the v2 document is
// encoded again only after a change.
func TestOpenAPIBuildsLazily(t *testing.T) {
	o := NewOpenAPI("Kubernetes", "v1.0.0")
	var v3Builds, v2Builds int
	o.SetV3Func("apis/a/v1", func() ([]byte, error) { v3Builds++; return []byte(`{"openapi":"3.0.0"}`), nil })
	o.AddV2Source(func() (map[string]any, map[string]any, map[string]any, error) {
		v2Builds++
		return map[string]any{"/apis/a/v1/things": map[string]any{}}, map[string]any{"a.v1.Thing": map[string]any{"type": "object"}}, nil, nil
	})
	o.MergeV2Parameters(map[string]any{"pretty-abc": map[string]any{"in": "query", "name": "pretty", "type": "string"}})
	if v3Builds != 0 || v2Builds != 0 {
		t.Fatalf("built before any request: v3 %d, v2 %d", v3Builds, v2Builds)
	}
	mux := NewPathMux("test")
	o.install(mux)
	get := func(path string) []byte {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	for range 3 {
		get("/openapi/v3")
		get("/openapi/v3/apis/a/v1")
		get("/openapi/v2")
	}
	if v3Builds != 1 || v2Builds != 1 {
		t.Errorf("got %d v3 and %d v2 builds after three requests each, want one each", v3Builds, v2Builds)
	}
	var doc struct {
		Paths       map[string]any `json:"paths"`
		Definitions map[string]any `json:"definitions"`
		Parameters  map[string]any `json:"parameters"`
	}
	if err := json.Unmarshal(get("/openapi/v2"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Paths["/apis/a/v1/things"] == nil || doc.Definitions["a.v1.Thing"] == nil || doc.Parameters["pretty-abc"] == nil {
		t.Errorf("v2 document %+v lacks the source's path and definition or the shared parameter", doc)
	}
	o.RemoveV2Parameters([]string{"pretty-abc"})
	doc.Parameters = nil
	if err := json.Unmarshal(get("/openapi/v2"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Parameters != nil {
		t.Errorf("parameters %v after their removal, want none", doc.Parameters)
	}
	if !o.HasV2Definition("a.v1.Thing") {
		t.Error("HasV2Definition(a.v1.Thing) = false, want true")
	}

	o.SetV3Func("apis/b/v1", func() ([]byte, error) { return nil, errors.New("broken") })
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/v3/apis/b/v1", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("GET a failing document: %d, want 500", rec.Code)
	}
	var index struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(get("/openapi/v3"), &index); err != nil {
		t.Fatal(err)
	}
	if _, ok := index.Paths["apis/b/v1"]; ok || index.Paths["apis/a/v1"] == nil {
		t.Errorf("index %v: want apis/a/v1 and not the failing apis/b/v1", index.Paths)
	}
}

// A part of the v2 document is replaced or removed whole, never touching
// another part or what MergeV2 added; a failing part is left out.
func TestOpenAPIV2Parts(t *testing.T) {
	o := NewOpenAPI("Kubernetes", "v1.0.0")
	o.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	part := func(path, def string) V2Source {
		return func() (map[string]any, map[string]any, map[string]any, error) {
			return map[string]any{path: map[string]any{}}, map[string]any{def: map[string]any{"type": "object"}}, nil, nil
		}
	}
	o.MergeV2(map[string]any{"/merged": map[string]any{}}, nil)
	o.SetV2Func("a", part("/a/1", "a.One"))
	o.SetV2Func("b", part("/b", "b.Def"))
	o.SetV2Func("a", part("/a/2", "a.Two")) // replaces /a/1 and a.One
	o.SetV2Func("c", func() (map[string]any, map[string]any, map[string]any, error) {
		return nil, nil, nil, errors.New("broken")
	})
	mux := NewPathMux("test")
	o.install(mux)
	v2 := func() (paths, defs []string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil))
		var doc struct {
			Paths       map[string]any `json:"paths"`
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("decode /openapi/v2 (%d): %v", rec.Code, err)
		}
		for k := range doc.Paths {
			paths = append(paths, k)
		}
		for k := range doc.Definitions {
			defs = append(defs, k)
		}
		slices.Sort(paths)
		slices.Sort(defs)
		return paths, defs
	}
	paths, defs := v2()
	if want := []string{"/a/2", "/b", "/merged"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	if want := []string{"a.Two", "b.Def"}; !slices.Equal(defs, want) {
		t.Errorf("definitions %v, want %v", defs, want)
	}
	if !o.HasV2Definition("b.Def") || o.HasV2Definition("a.One") {
		t.Error("HasV2Definition does not follow the parts")
	}
	o.SetV2Func("b", nil)
	if paths, defs = v2(); !slices.Equal(paths, []string{"/a/2", "/merged"}) || !slices.Equal(defs, []string{"a.Two"}) {
		t.Errorf("after removing b: paths %v definitions %v", paths, defs)
	}
}
