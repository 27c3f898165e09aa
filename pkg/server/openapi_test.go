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
