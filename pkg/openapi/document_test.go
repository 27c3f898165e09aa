package openapi

import (
	"encoding/json"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestNewDocumentV3(t *testing.T) {
	t.Parallel()
	d := testDefs()
	schemas, err := d.Schemas(gvk("coordination.k8s.io", "v1", "Lease"))
	if err != nil {
		t.Fatal(err)
	}
	doc := NewDocumentV3(nil, nil, schemas)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var back spec3.OpenAPI
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("served document does not parse back: %v\n%s", err, b)
	}
	if back.Version != "3.0.0" {
		t.Errorf("openapi = %q, want 3.0.0", back.Version)
	}
	if back.Info == nil || back.Info.Title != "Kubernetes" {
		t.Errorf("info = %+v, want title Kubernetes", back.Info)
	}
	if back.Paths == nil {
		t.Error("paths missing, want an empty object")
	}
	if got, want := len(back.Components.Schemas), len(schemas); got != want {
		t.Errorf("components.schemas has %d entries, want %d", got, want)
	}
	if checkClosed(t, back.Components.Schemas, refPrefixV3) == 0 {
		t.Error("document has no $ref")
	}

	info := &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: "v1.37.2"}}
	paths := map[string]*spec3.Path{"/apis/coordination.k8s.io/v1/leases": {}}
	doc = NewDocumentV3(info, paths, schemas)
	if doc.Info.Version != "v1.37.2" || len(doc.Paths.Paths) != 1 {
		t.Errorf("document = info %+v, %d paths; want the given ones", doc.Info, len(doc.Paths.Paths))
	}
}
