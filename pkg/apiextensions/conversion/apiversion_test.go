package conversion

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestIsAPIVersionAsString checks isAPIVersion against gv.String(), and
// withGroupVersion against withAPIVersion.
func TestIsAPIVersionAsString(t *testing.T) {
	parts := []string{"", "a", "b", "a/b", "b/c", "stable.example.com", "v1", "v1beta1", "/"}
	var gvs []schema.GroupVersion
	var apiVersions []string
	for _, g := range parts {
		for _, v := range parts {
			gvs = append(gvs, schema.GroupVersion{Group: g, Version: v})
			apiVersions = append(apiVersions, g+v, g+"/"+v, v, g)
		}
	}
	matches := 0
	for _, gv := range gvs {
		for _, av := range apiVersions {
			want := av == gv.String()
			if got := isAPIVersion(av, gv); got != want {
				t.Fatalf("isAPIVersion(%q, %#v) = %v, want %v", av, gv, got, want)
			}
			if want {
				matches++
			}
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": av, "kind": "K"}}
			got, want2 := withGroupVersion(u, gv), withAPIVersion(u, gv.String())
			if (got == u) != (want2 == u) || got.GetAPIVersion() != want2.GetAPIVersion() {
				t.Fatalf("withGroupVersion(%q, %#v) = %v, want %v", av, gv, got.Object, want2.Object)
			}
		}
	}
	if matches == 0 {
		t.Fatal("no apiVersion matched")
	}
}
