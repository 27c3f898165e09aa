package schema

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// sharedTestSchema has properties, items, additional properties and a
// oneOf: every kind of validator kube-openapi makes per value.
func sharedTestSchema() *apiextensionsv1.JSONSchemaProps {
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Required: []string{"name"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"name":   {Type: "string", MaxLength: ptrInt64(3), Pattern: "^[a-z]+$"},
				"items":  {Type: "array", MaxItems: ptrInt64(2), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer", Maximum: ptrFloat64(9)}}},
				"labels": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MinLength: ptrInt64(1)}}},
				"either": {OneOf: []apiextensionsv1.JSONSchemaProps{{Required: []string{"a"}}, {Required: []string{"b"}}}, Type: "object"},
			}},
		},
	}
}

func ptrFloat64(v float64) *float64 { return &v }

// errorStrings is errs as sorted strings (kube-openapi reports the
// properties of a value in map order).
func errorStrings(v *Validator, obj map[string]any) []string {
	var out []string
	for _, e := range v.Validate(obj) {
		out = append(out, e.Error())
	}
	slices.Sort(out)
	return out
}

// TestValidatorShared: one Validator validates concurrently, with the
// results of a Validator per call (run with -race: kube-openapi's
// SchemaValidator must keep no state between calls).
func TestValidatorShared(t *testing.T) {
	shared, err := NewValidator(sharedTestSchema())
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	var want [][]string
	for i := range 24 {
		items := []any{float64(i % 12), float64(3), float64(4)}[:i%4]
		obj := map[string]any{"spec": map[string]any{
			"name":   []string{"abc", "ABCD", ""}[i%3],
			"items":  items,
			"labels": map[string]any{"a": []string{"x", ""}[i%2]},
			"either": []map[string]any{{"a": 1.0}, {"a": 1.0, "b": 2.0}, {"b": 2.0}}[i%3],
		}}
		if i%5 == 4 {
			delete(obj["spec"].(map[string]any), "name")
		}
		fresh, err := NewValidator(sharedTestSchema())
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
		want = append(want, errorStrings(fresh, obj))
	}
	if n := len(slices.DeleteFunc(slices.Clone(want), func(s []string) bool { return len(s) == 0 })); n < len(want)/2 {
		t.Fatalf("only %d of %d objects invalid: the cases do not exercise the validators", n, len(want))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for round := range 50 {
				i := (g*7 + round) % len(objs)
				if got := errorStrings(shared, objs[i]); !slices.Equal(got, want[i]) {
					t.Errorf("object %d: got %q, want %q", i, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestValidatorBuiltOnce: validating does not build kube-openapi's
// validator again (its eight value validators and their slice): a
// validation allocates what one of a validator built beforehand does.
func TestValidatorBuiltOnce(t *testing.T) {
	preserve := true
	props := &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	v, err := NewValidator(props)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ToOpenAPI(props)
	if err != nil {
		t.Fatal(err)
	}
	prebuilt := validate.NewSchemaValidator(s, nil, "", strfmt.Default)
	var obj map[string]any
	if err := json.Unmarshal([]byte(`{"spec":{"n":1}}`), &obj); err != nil {
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(100, func() { v.Validate(obj) })
	want := testing.AllocsPerRun(100, func() { prebuilt.Validate(obj) })
	if got > want {
		t.Errorf("a validation allocates %.0f times, one of a prebuilt kube-openapi validator %.0f", got, want)
	}
}
