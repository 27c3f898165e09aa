package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The v2 document assembled from per-entry encodings must be exactly what
// encoding the whole document at once gives: the JSON encoding/json makes
// of the map, and the protobuf gnostic's ParseDocument + proto.Marshal
// make of that JSON (what kapi served before entries were encoded apart).
// Checked after each kind of change, with vendor-extension paths, shared
// parameters, HTML characters and parts that name the same definition.
func TestOpenAPIV2EntriesEncodeAsTheWholeDocument(t *testing.T) {
	o := NewOpenAPI("Kubernetes", "v1.37.2")
	op := func(id string) map[string]any {
		return map[string]any{"get": map[string]any{
			"operationId": id, "produces": []any{"application/json"},
			"parameters": []any{map[string]any{"$ref": "#/parameters/pretty-abc"}},
			"responses":  map[string]any{"200": map[string]any{"description": "OK <b>&amp;</b>", "schema": map[string]any{"$ref": "#/definitions/a.v1.Thing"}}},
		}}
	}
	schema := func(desc string) *spec.Schema {
		s := spec.MapProperty(spec.StringProperty())
		s.Description = desc
		s.Properties = map[string]spec.Schema{"spec": *spec.StringProperty(), "n": *spec.Int64Property()}
		s.Extensions = spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{"group": "a", "kind": "Thing", "version": "v1"}}}
		return s
	}
	base := map[string]map[string]any{
		"paths": {"/apis/a/v1/things": op("listThings"), "/apis/a/v1/things/{name}": op("readThing"), "x-kapi-note": "vendor <ext>"},
		"defs":  {"a.v1.Thing": schema("A thing & <more>."), "a.v1.ThingList": map[string]any{"type": "object"}},
	}
	o.AddV2Source(func() (map[string]any, map[string]any, map[string]any, error) {
		return base["paths"], base["defs"], nil, nil
	})
	o.MergeV2Parameters(map[string]any{"pretty-abc": map[string]any{"in": "query", "name": "pretty", "type": "string", "uniqueItems": true}})
	parts := map[string][3]map[string]any{}
	setPart := func(key string, paths, defs, params map[string]any) {
		parts[key] = [3]map[string]any{paths, defs, params}
		o.SetV2Func(key, func() (map[string]any, map[string]any, map[string]any, error) { return paths, defs, params, nil })
	}
	watchParam := map[string]any{"$ref": "#/parameters/watch-xyz"}
	setPart("apis/b/v1", map[string]any{"/apis/b/v1/gizmos": op("listGizmos")}, map[string]any{"b.v1.Gizmo": schema("gizmo"), "shared.Def": schema("from b")},
		map[string]any{"watch-xyz": map[string]any{"in": "query", "name": "watch", "type": "boolean", "uniqueItems": true}})
	setPart("apis/c/v1", map[string]any{"/apis/c/v1/gadgets": op("listGadgets"), "/apis/c/v1/watch/gadgets": map[string]any{"parameters": []any{watchParam}}},
		map[string]any{"c.v1.Gadget": schema("gadget"), "shared.Def": schema("from c")},
		map[string]any{"watch-xyz": map[string]any{"in": "query", "name": "watch", "type": "boolean", "uniqueItems": true}})
	bearerToken := false

	check := func(step string) {
		t.Helper()
		paths, defs := maps.Clone(base["paths"]), maps.Clone(base["defs"])
		params := map[string]any{}
		for _, key := range []string{"apis/b/v1", "apis/c/v1"} { // key order: the later part wins
			if p, ok := parts[key]; ok {
				maps.Copy(paths, p[0])
				maps.Copy(defs, p[1])
				maps.Copy(params, p[2])
			}
		}
		// The top-level keys, and a security scheme's, in the order of
		// kube-openapi's spec types, as kube-apiserver v1.37.2 writes
		// them; the entries of each sorted.
		type securityScheme struct {
			Description string `json:"description"`
			Type        string `json:"type"`
			Name        string `json:"name"`
			In          string `json:"in"`
		}
		var doc struct {
			Swagger string `json:"swagger"`
			Info    struct {
				Title   string `json:"title"`
				Version string `json:"version"`
			} `json:"info"`
			Paths               map[string]any            `json:"paths"`
			Definitions         map[string]any            `json:"definitions"`
			Parameters          map[string]any            `json:"parameters,omitempty"`
			SecurityDefinitions map[string]securityScheme `json:"securityDefinitions,omitempty"`
			Security            []any                     `json:"security,omitempty"`
		}
		doc.Swagger, doc.Info.Title, doc.Info.Version, doc.Paths, doc.Definitions = "2.0", "Kubernetes", "v1.37.2", paths, defs
		o.mu.Lock()
		for k, e := range o.v2Params {
			params[k] = e.value
		}
		o.mu.Unlock()
		if len(params) > 0 {
			doc.Parameters = params
		}
		if bearerToken {
			doc.Security = []any{map[string]any{"BearerToken": []any{}}}
			doc.SecurityDefinitions = map[string]securityScheme{"BearerToken": {
				Description: "Bearer Token authentication", Type: "apiKey", Name: "authorization", In: "header",
			}}
		}
		// HTML characters not escaped, as kube-apiserver v1.37.2 writes
		// /openapi/v2.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			t.Fatal(err)
		}
		wantJSON := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if !bytes.Contains(wantJSON, []byte("<b>&amp;</b>")) {
			t.Fatalf("%s: the expected document lost its HTML characters: %.300s", step, wantJSON)
		}
		wantPB, err := protobufOfV2(wantJSON)
		if err != nil {
			t.Fatalf("%s: the whole document does not parse: %v", step, err)
		}
		mux := NewPathMux("test")
		o.install(mux)
		get := func(accept string) []byte {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
			req.Header.Set("Accept", accept)
			mux.ServeHTTP(rec, req)
			return rec.Body.Bytes()
		}
		if got := get("application/json"); !bytes.Equal(got, wantJSON) {
			t.Fatalf("%s: JSON differs from the whole document's encoding:\ngot  %.300s\nwant %.300s", step, got, wantJSON)
		}
		if got := get("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"); !bytes.Equal(got, wantPB) {
			t.Fatalf("%s: protobuf (%d bytes) differs from the whole document's (%d bytes)", step, len(got), len(wantPB))
		}
	}
	check("first build")
	o.MergeV2(map[string]any{"/apis/d/v1/doodads": op("listDoodads")}, map[string]any{"d.v1.Doodad": schema("doodad")})
	base["paths"]["/apis/d/v1/doodads"], base["defs"]["d.v1.Doodad"] = op("listDoodads"), schema("doodad")
	check("after MergeV2")
	setPart("apis/b/v1", map[string]any{"/apis/b/v1/gizmos": op("listGizmos2")}, map[string]any{"b.v1.Gizmo": schema("gizmo 2")}, nil)
	check("after a part is replaced")
	o.SetBearerTokenSecurity(true)
	bearerToken = true
	check("with bearer-token security")
	if o.HasV2Parameter("watch-xyz") {
		t.Error("a part's parameter is taken for good")
	}
	o.SetV2Func("apis/c/v1", nil)
	delete(parts, "apis/c/v1")
	check("after a part (the last with a parameter) is removed")
	o.RemoveV2([]string{"/apis/d/v1/doodads"}, []string{"d.v1.Doodad"})
	delete(base["paths"], "/apis/d/v1/doodads")
	delete(base["defs"], "d.v1.Doodad")
	o.RemoveV2Parameters([]string{"pretty-abc"})
	check("after RemoveV2 and without parameters")
}
