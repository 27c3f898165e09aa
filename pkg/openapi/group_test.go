package openapi

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A group-version's v3 document lists DeleteOptions and WatchEvent under
// core v1 and its own group-version only, as kube-apiserver v1.37.2's
// /openapi/v3/apis/coordination.k8s.io/v1 does (its filterScopedGVKs);
// the shared schemas keep every group-version.
func TestDocumentV3ScopesCrossRegisteredKinds(t *testing.T) {
	d := NewDefinitions()
	gv := schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	doc, err := d.DocumentV3(nil, gv, ResourcesOf(gv, []metav1.APIResource{{Name: "leases", Namespaced: true, Kind: "Lease", Verbs: []string{"delete", "get", "list", "watch"}}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"DeleteOptions", "WatchEvent"} {
		name := "io.k8s.apimachinery.pkg.apis.meta.v1." + kind
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Fatalf("%s not in the document", name)
		}
		got, err := json.Marshal(s.Extensions[ExtensionGVK])
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"group":"","kind":"` + kind + `","version":"v1"},{"group":"coordination.k8s.io","kind":"` + kind + `","version":"v1"}]`
		if string(got) != want {
			t.Errorf("%s: %s, want %s", kind, got, want)
		}
		shared, err := d.SchemasForNames(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(shared[name].Extensions[ExtensionGVK].([]any)); n <= 2 {
			t.Errorf("%s: the shared schema lists %d group-versions: narrowed in place", kind, n)
		}
	}
}
