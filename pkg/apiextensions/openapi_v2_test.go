package apiextensions

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func TestV2Schema(t *testing.T) {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	in := &apiextensionsv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"a", "n"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"a":    str,
			"n":    {Type: "object", Nullable: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str}},
			"ios":  {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
			"free": {Type: "object", XPreserveUnknownFields: ptr.To(true), Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str}},
			"list": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
		},
	}
	got, err := v2Schema(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"nullable not required", got.Required, []string{"a"}},
		{"nullable untyped", len(got.Properties["n"].Type), 0},
		{"nullable without properties", len(got.Properties["n"].Properties), 0},
		{"int-or-string untyped", len(got.Properties["ios"].Type), 0},
		{"no anyOf", len(got.Properties["ios"].AnyOf), 0},
		{"preserve-unknown without properties", len(got.Properties["free"].Properties), 0},
		{"preserve-unknown object untyped", len(got.Properties["free"].Type), 0},
		{"list kept", got.Properties["list"].Items.Schema.Type[0], "string"},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// As upstream's builder: in v2, a kind whose unknown fields are preserved
// at the root (or without a schema) is an object and nothing more, else
// kubectl's client-side validation rejects every field but apiVersion,
// kind and metadata; in v3 it keeps its properties.
func TestKindDefinitionsPreservedRoot(t *testing.T) {
	crd := crdtest.NewCRD("example.com", "things", "Thing", apiextensionsv1.NamespaceScoped)
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.AcceptedNames.ListKind = "ThingList"
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}},
	}
	gv := schemaGV("example.com", "v1")
	defs := map[string]any{}
	if err := addCRDV2(gv, crd, defs); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(defs["com.example.v1.Thing"])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","x-kubernetes-group-version-kind":[{"group":"example.com","kind":"Thing","version":"v1"}]}`; string(b) != want {
		t.Errorf("v2 Thing = %s, want %s", b, want)
	}
	if defs["com.example.v1.ThingList"] == nil {
		t.Error("v2 ThingList missing")
	}

	schemas := map[string]*spec.Schema{}
	if err := addCRDV3(gv, crd, schemas); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"apiVersion", "kind", "metadata", "spec"} {
		if _, ok := schemas["com.example.v1.Thing"].Properties[p]; !ok {
			t.Errorf("v3 Thing lacks property %s", p)
		}
	}

	// No schema at all: an object in both.
	crd.Spec.Versions[0].Schema = nil
	defs = map[string]any{}
	if err := addCRDV2(gv, crd, defs); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(defs["com.example.v1.Thing"]); !strings.HasPrefix(string(b), `{"type":"object","x-kubernetes-group-version-kind"`) {
		t.Errorf("v2 Thing without schema = %s, want an object", b)
	}
}

// The v2 document carries each served kind (named as upstream) and its
// paths while the CRD exists; JSON and protobuf both serve.
func TestOpenAPIV2(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	type doc struct {
		Paths       map[string]json.RawMessage `json:"paths"`
		Definitions map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			GVK        []map[string]string        `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
	}
	get := func() doc {
		t.Helper()
		code, body := ts.do(t, http.MethodGet, "/openapi/v2", "")
		if code != 200 {
			t.Fatalf("GET /openapi/v2: %d %s", code, body)
		}
		var d doc
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	var d doc
	eventually(t, waitTimeout, "widgets in the v2 document", func() bool {
		d = get()
		_, ok := d.Definitions["com.example.v1.Widget"]
		return ok
	})
	w := d.Definitions["com.example.v1.Widget"]
	for _, p := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
		if _, ok := w.Properties[p]; !ok {
			t.Errorf("com.example.v1.Widget lacks property %s", p)
		}
	}
	if want := []map[string]string{{"group": "example.com", "version": "v1", "kind": "Widget"}}; !reflect.DeepEqual(w.GVK, want) {
		t.Errorf("x-kubernetes-group-version-kind: got %v, want %v", w.GVK, want)
	}
	for _, name := range []string{"com.example.v1.WidgetList", objectMetaName, listMetaName} {
		if _, ok := d.Definitions[name]; !ok {
			t.Errorf("definition %s missing", name)
		}
	}
	for _, p := range []string{"/apis/example.com/v1/namespaces/{namespace}/widgets", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"} {
		if _, ok := d.Paths[p]; !ok {
			t.Errorf("path %s missing", p)
		}
	}
	req, err := http.NewRequest(http.MethodGet, ts.srv.URL+"/openapi/v2", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Fatalf("GET /openapi/v2 as protobuf: got %d %s, want 200 protobuf", resp.StatusCode, ct)
	}

	if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "widgets gone from the v2 document", func() bool {
		d = get()
		_, ok := d.Definitions["com.example.v1.Widget"]
		return !ok
	})
	for _, name := range []string{"com.example.v1.WidgetList"} {
		if _, ok := d.Definitions[name]; ok {
			t.Errorf("definition %s still there", name)
		}
	}
	if _, ok := d.Definitions[objectMetaName]; !ok {
		t.Errorf("ObjectMeta removed with the CRD")
	}
	if len(d.Paths) != 0 {
		for p := range d.Paths {
			if len(p) > len("/apis/example.com/") && p[:len("/apis/example.com/")] == "/apis/example.com/" {
				t.Errorf("path %s still there", p)
			}
		}
	}
}

func schemaGV(group, version string) schema.GroupVersion {
	return schema.GroupVersion{Group: group, Version: version}
}

// A CEL rule's keys are written as kube-apiserver v1.37.2 writes them: in
// v3 in apiextensions/v1 ValidationRule's field order, in v2 sorted (a
// CRD with `rule: self.count <= 100, messageExpression: ..., reason:
// FieldValueForbidden, fieldPath: .count`).
func TestValidationRuleKeyOrder(t *testing.T) {
	crd := crdtest.NewCRD("example.com", "things", "Thing", apiextensionsv1.NamespaceScoped)
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.AcceptedNames.ListKind = "ThingList"
	reason := apiextensionsv1.FieldValueForbidden
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {
			Type:       "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"count": {Type: "integer"}},
			XValidations: apiextensionsv1.ValidationRules{{
				Rule: "self.count <= 100", MessageExpression: "'count too big'", Reason: &reason, FieldPath: ".count",
			}},
		}},
	}
	gv := schemaGV("example.com", "v1")
	schemas := map[string]*spec.Schema{}
	if err := addCRDV3(gv, crd, schemas); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(schemas["com.example.v1.Thing"].Properties["spec"].Extensions["x-kubernetes-validations"])
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"rule":"self.count \u003c= 100","messageExpression":"'count too big'","reason":"FieldValueForbidden","fieldPath":".count"}]`; string(b) != want {
		t.Errorf("v3 x-kubernetes-validations = %s, want %s", b, want)
	}
	defs := map[string]any{}
	if err := addCRDV2(gv, crd, defs); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(defs["com.example.v1.Thing"]); err != nil {
		t.Fatal(err)
	}
	if want := `"x-kubernetes-validations":[{"fieldPath":".count","messageExpression":"'count too big'","reason":"FieldValueForbidden","rule":"self.count \u003c= 100"}]`; !strings.Contains(string(b), want) {
		t.Errorf("v2 Thing = %s, want it to hold %s", b, want)
	}
}
