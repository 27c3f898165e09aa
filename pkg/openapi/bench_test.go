package openapi_test

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/openapi"
)

// coreV1 is a core/v1 group-version of about kapi's size.
func coreV1() (schema.GroupVersion, []openapi.Resource) {
	gv := schema.GroupVersion{Version: "v1"}
	var rs []openapi.Resource
	for _, name := range []string{"configmaps", "services", "namespaces", "leases"} {
		for _, r := range builtin[name].resources {
			if builtin[name].gv == gv {
				rs = append(rs, openapi.ResourcesOf(gv, []metav1.APIResource{r})...)
			}
		}
	}
	return gv, rs
}

// BenchmarkPaths measures building a group-version's operations.
func BenchmarkPaths(b *testing.B) {
	gv, rs := coreV1()
	defs := openapi.Default()
	b.ReportAllocs()
	for b.Loop() {
		p, err := defs.Paths(gv, rs)
		if err != nil {
			b.Fatal(err)
		}
		_ = p.V3()
	}
}

// BenchmarkDocumentV3 measures what the first request of a group-version's
// v3 document costs (the schema tables already built, as the field
// managers build them at start).
func BenchmarkDocumentV3(b *testing.B) {
	gv, rs := coreV1()
	defs := openapi.Default()
	if _, err := defs.DocumentV3(nil, gv, rs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		doc, err := defs.DocumentV3(nil, gv, rs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(doc); err != nil {
			b.Fatal(err)
		}
	}
}
