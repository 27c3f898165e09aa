package openapi

import (
	"encoding/json"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/kube-openapi/pkg/schemaconv"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// TestParserModels: the structured-merge-diff schema built from the
// unwrapped definitions (what the parser now uses) is the one built from
// the served v3 schemas (what it was built from before).
func TestParserModels(t *testing.T) {
	d := NewDefinitions()
	d.v3.mu.Lock()
	raw := d.v3.rawLocked()
	d.v3.mu.Unlock()
	fromModels, err := schemaconv.ToSchemaFromOpenAPI(parserModels(raw), false)
	if err != nil {
		t.Fatal(err)
	}
	fromServed, err := schemaconv.ToSchemaFromOpenAPI(d.AllSchemas(), false)
	if err != nil {
		t.Fatal(err)
	}
	sorted := func(s *smdschema.Schema) []smdschema.TypeDef {
		types := slices.Clone(s.Types)
		slices.SortFunc(types, func(a, b smdschema.TypeDef) int { return strings.Compare(a.Name, b.Name) })
		return types
	}
	a, b := sorted(fromModels), sorted(fromServed)
	if len(a) != len(b) || len(a) < 500 {
		t.Fatalf("types: %d from the models, %d from the served schemas", len(a), len(b))
	}
	// Compared as JSON, with fields in name order: smd's Map keeps
	// unexported lookup caches, and schemaconv lists a type's fields in
	// the order it iterates a map of properties.
	canonical := func(td smdschema.TypeDef) string {
		j, err := json.Marshal(td)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			t.Fatal(err)
		}
		sortNamed(v)
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for i := range a {
		ja, jb := canonical(a[i]), canonical(b[i])
		if ja != jb {
			t.Fatalf("type %s differs:\nfrom the models: %s\nfrom the served: %s", a[i].Name, ja, jb)
		}
	}
}

// sortNamed sorts, everywhere in v, lists of objects with a "Name" by it.
func sortNamed(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			sortNamed(e)
		}
	case []any:
		for _, e := range v {
			sortNamed(e)
		}
		slices.SortStableFunc(v, func(a, b any) int {
			am, _ := a.(map[string]any)
			bm, _ := b.(map[string]any)
			an, _ := am["Name"].(string)
			bn, _ := bm["Name"].(string)
			return strings.Compare(an, bn)
		})
	}
}

// TestLazySchemas: schemas are built on first request, the same object is
// served again, closures are complete whether their members were built
// before or not, also when the generated definitions were collected in
// between, and concurrent requests agree.
func TestLazySchemas(t *testing.T) {
	d := NewDefinitions()
	const pod = "io.k8s.api.core.v1.Pod"
	meta, err := d.SchemasForNames("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.v3.schemas); n != len(meta) {
		t.Fatalf("%d v3 schemas built after one closure of %d", n, len(meta))
	}
	runtime.GC() // the generated definitions are held weakly: collected here
	runtime.GC()
	podSchemas, err := d.SchemasForNames(pod)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range meta {
		if podSchemas[name] != s {
			t.Errorf("%s: built again, want the schema built before", name)
		}
	}
	fresh := NewDefinitions()
	all := fresh.AllSchemas()
	for name := range podSchemas {
		if !reflect.DeepEqual(podSchemas[name], all[name]) {
			t.Errorf("%s: lazily built schema differs from the one built with all", name)
		}
	}
	if _, ok := podSchemas["io.k8s.api.core.v1.PodSpec"]; !ok {
		t.Errorf("closure of Pod misses PodSpec")
	}

	var wg sync.WaitGroup
	results := make([]map[string]any, 8)
	d2 := NewDefinitions()
	for i := range results {
		wg.Go(func() {
			m, err := d2.SchemasV2ForNames(pod)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = map[string]any{}
			for k, v := range m {
				results[i][k] = v
			}
		})
	}
	wg.Wait()
	for i := 1; i < len(results); i++ {
		if !reflect.DeepEqual(results[0], results[i]) {
			t.Fatalf("concurrent closures differ")
		}
	}
}
