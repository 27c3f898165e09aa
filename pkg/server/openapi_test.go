package server

import (
	"encoding/json"
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

// The v2 document is built when served: a change after it was served
// (JSON or protobuf) shows in the next response.
func TestOpenAPIV2FollowsChanges(t *testing.T) {
	o := NewOpenAPI("Kubernetes", "v1.0.0")
	mux := NewPathMux("test")
	o.install(mux)
	get := func(accept string) (string, []byte) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /openapi/v2: %d %s", rec.Code, rec.Body)
		}
		return rec.Header().Get("Etag"), rec.Body.Bytes()
	}
	definitions := func() map[string]any {
		t.Helper()
		_, body := get("")
		var doc struct {
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Definitions
	}
	const protoAccept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	emptyTag, emptyProto := get(protoAccept)
	if len(definitions()) != 0 {
		t.Fatalf("got definitions %v, want none", definitions())
	}
	o.MergeV2(nil, map[string]any{"com.example.v1.Widget": map[string]any{"type": "object"}})
	if _, ok := definitions()["com.example.v1.Widget"]; !ok {
		t.Fatal("a definition merged after the document was served is missing")
	}
	tag, pb := get(protoAccept)
	if tag == emptyTag || slices.Equal(pb, emptyProto) {
		t.Fatalf("protobuf document unchanged after a merge (etag %s)", tag)
	}
	o.RemoveV2(nil, []string{"com.example.v1.Widget"})
	if len(definitions()) != 0 {
		t.Fatalf("got definitions %v after the removal, want none", definitions())
	}
	if tag, _ := get(protoAccept); tag != emptyTag {
		t.Fatalf("got etag %s after the removal, want the empty document's %s", tag, emptyTag)
	}
}
