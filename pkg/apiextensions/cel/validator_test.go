package cel

import (
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func reasonPtr(r apiextensionsv1.FieldValueErrorReason) *apiextensionsv1.FieldValueErrorReason {
	return &r
}

func TestCELRules(t *testing.T) {
	bigList := make([]any, 2000)
	for i := range bigList {
		bigList[i] = int64(i + 1)
	}
	cases := []struct {
		name string
		rule apiextensionsv1.ValidationRule
		spec map[string]any
		old  map[string]any // old spec, on update
		want []string       // exact error strings; none: valid
	}{
		{name: "true", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas <= self.maxReplicas", Message: "must have replicas <= maxReplicas"},
			spec: map[string]any{"replicas": int64(1), "maxReplicas": int64(2)}},
		{name: "false with message", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas <= self.maxReplicas", Message: "must have replicas <= maxReplicas"},
			spec: map[string]any{"replicas": int64(3), "maxReplicas": int64(2)},
			want: []string{`spec: Invalid value: must have replicas <= maxReplicas`}},
		{name: "false without message", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas <= self.maxReplicas"},
			spec: map[string]any{"replicas": int64(3), "maxReplicas": int64(2)},
			want: []string{`spec: Invalid value: failed rule: self.replicas <= self.maxReplicas`}},
		{name: "messageExpression replaces message", rule: apiextensionsv1.ValidationRule{
			Rule: "self.replicas <= self.maxReplicas", Message: "static",
			MessageExpression: `"replicas " + string(self.replicas) + " above " + string(self.maxReplicas)`},
			spec: map[string]any{"replicas": int64(3), "maxReplicas": int64(2)},
			want: []string{`spec: Invalid value: replicas 3 above 2`}},
		{name: "reason Forbidden", rule: apiextensionsv1.ValidationRule{Rule: "!has(self.name)", Message: "name is not allowed", Reason: reasonPtr(apiextensionsv1.FieldValueForbidden)},
			spec: map[string]any{"name": "x"},
			want: []string{`spec: Forbidden: name is not allowed`}},
		{name: "reason Required with fieldPath", rule: apiextensionsv1.ValidationRule{Rule: "has(self.name)", Message: "name is needed",
			Reason: reasonPtr(apiextensionsv1.FieldValueRequired), FieldPath: ".name"},
			spec: map[string]any{},
			want: []string{`spec.name: Required value: name is needed`}},
		{name: "reason Duplicate", rule: apiextensionsv1.ValidationRule{Rule: "false", Reason: reasonPtr(apiextensionsv1.FieldValueDuplicate)},
			spec: map[string]any{},
			want: []string{`spec: Duplicate value`}},
		{name: "fieldPath with brackets", rule: apiextensionsv1.ValidationRule{Rule: "false", Message: "m", FieldPath: ".labels['a.b']"},
			spec: map[string]any{},
			want: []string{`spec.labels[a.b]: Invalid value: m`}},
		{name: "transition rule skipped on create", rule: apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: "is immutable"},
			spec: map[string]any{"name": "a"}},
		{name: "transition rule unchanged", rule: apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: "is immutable"},
			spec: map[string]any{"name": "a"}, old: map[string]any{"name": "a"}},
		{name: "transition rule changed", rule: apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: "is immutable"},
			spec: map[string]any{"name": "b"}, old: map[string]any{"name": "a"},
			want: []string{`spec: Invalid value: is immutable`}},
		{name: "list rule true", rule: apiextensionsv1.ValidationRule{Rule: "self.list.all(x, x > 0)", Message: "positive"},
			spec: map[string]any{"list": []any{int64(1), int64(2)}}},
		{name: "list rule false", rule: apiextensionsv1.ValidationRule{Rule: "self.list.all(x, x > 0)", Message: "positive"},
			spec: map[string]any{"list": []any{int64(1), int64(0)}},
			want: []string{`spec: Invalid value: positive`}},
		{name: "map rule false", rule: apiextensionsv1.ValidationRule{Rule: "self.labels.all(k, self.labels[k] != '')", Message: "no empty labels"},
			spec: map[string]any{"labels": map[string]any{"a": "x", "b": ""}},
			want: []string{`spec: Invalid value: no empty labels`}},
		{name: "map rule true", rule: apiextensionsv1.ValidationRule{Rule: "'a' in self.labels", Message: "needs a"},
			spec: map[string]any{"labels": map[string]any{"a": "x"}}},
		{name: "cost limit exceeded", rule: apiextensionsv1.ValidationRule{Rule: "self.list.all(x, self.list.all(y, x + y > 0))"},
			spec: map[string]any{"list": bigList},
			want: []string{`spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.list.all(x, self.list.all(y, x + y > 0))`}},
		{name: "evaluation error", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas > 0"},
			spec: map[string]any{},
			want: []string{`spec: Invalid value: "object": no such key: replicas evaluating rule: self.replicas > 0`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, errs := NewValidator(crdtest.SpecWithRules(tc.rule), nil)
			if errs = compileErrors(errs); len(errs) > 0 {
				t.Fatalf("compile: %v", errs)
			}
			var old map[string]any
			if tc.old != nil {
				old = map[string]any{"spec": tc.old}
			}
			got := v.Validate(map[string]any{"spec": tc.spec}, old)
			var gotS []string
			for _, e := range got {
				gotS = append(gotS, e.Error())
			}
			if strings.Join(gotS, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got %q, want %q", gotS, tc.want)
			}
		})
	}
}

// TestCELRuleOnNestedNodes checks that rules of list items and map values
// get the item's path, and that a value absent from the object is not
// checked.
func TestCELRuleOnNestedNodes(t *testing.T) {
	s := crdtest.SpecWithRules()
	spec := s.Properties["spec"]
	list := spec.Properties["list"]
	list.Items.Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: "self < 10", Message: "too big"}}
	labels := spec.Properties["labels"]
	labels.AdditionalProperties.Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size() < 3", Message: "too long"}}
	v, errs := NewValidator(s, nil)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	got := v.Validate(map[string]any{"spec": map[string]any{
		"list":   []any{int64(1), int64(20)},
		"labels": map[string]any{"a": "abcd"},
	}}, nil)
	want := []string{
		field.Invalid(field.NewPath("spec", "labels", "a"), "abcd", "too long").Error(),
		field.Invalid(field.NewPath("spec", "list").Index(1), int64(20), "too big").Error(),
	}
	var gotS []string
	for _, e := range got {
		gotS = append(gotS, e.Error())
	}
	sort.Strings(gotS)
	if !slices.Equal(gotS, want) {
		t.Errorf("got %q, want %q", gotS, want)
	}
	if got := v.Validate(map[string]any{"spec": map[string]any{}}, nil); len(got) != 0 {
		t.Errorf("got %v for absent values, want none", got)
	}
}

// TestCELTransitionRuleInLists checks that items of list-type=map lists
// correlate with old items by key (so their transition rules run), and
// items of other lists do not.
func TestCELTransitionRuleInLists(t *testing.T) {
	item := apiextensionsv1.JSONSchemaProps{
		Type:         "object",
		XValidations: apiextensionsv1.ValidationRules{{Rule: "self.value == oldSelf.value", Message: "value is immutable"}},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name":  {Type: "string"},
			"value": {Type: "string"},
		},
	}
	cases := []struct {
		name     string
		listType string
		want     []string
	}{
		{name: "map list", listType: "map", want: []string{`spec.items[0]: Invalid value: value is immutable`}},
		{name: "atomic list", listType: "atomic"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lt := tc.listType
			list := apiextensionsv1.JSONSchemaProps{Type: "array", XListType: &lt, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}}
			if lt == "map" {
				list.XListMapKeys = []string{"name"}
			}
			s := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"items": list}},
			}}
			v, errs := NewValidator(s, nil)
			if errs = compileErrors(errs); len(errs) > 0 {
				t.Fatalf("compile: %v", errs)
			}
			obj := func(items ...any) map[string]any {
				return map[string]any{"spec": map[string]any{"items": items}}
			}
			// b is unchanged but moved; a changed its value; c is new.
			got := v.Validate(
				obj(map[string]any{"name": "a", "value": "2"}, map[string]any{"name": "c", "value": "3"}, map[string]any{"name": "b", "value": "1"}),
				obj(map[string]any{"name": "b", "value": "1"}, map[string]any{"name": "a", "value": "1"}))
			var gotS []string
			for _, e := range got {
				gotS = append(gotS, e.Error())
			}
			if !slices.Equal(gotS, tc.want) {
				t.Errorf("got %q, want %q", gotS, tc.want)
			}
		})
	}
}

// FuzzCELFieldPath checks the fieldPath parser on arbitrary input: it
// must not panic, and a parsed path has no empty property.
func FuzzCELFieldPath(f *testing.F) {
	for _, s := range []string{"", ".a", ".a.b", ".a['b.c']", "['x']", "a", ".", "['", "[']", ".a[", ".a['b']['c'].d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseFieldPath(s)
		if err != nil {
			return
		}
		for _, n := range names {
			if n == "" && !strings.Contains(s, "['']") {
				t.Errorf("%q: got empty name in %q", s, names)
			}
		}
	})
}

// TestCELRootRule checks that a rule at the root sees apiVersion, kind
// and metadata (with only name and generateName, as upstream: other
// metadata fields are compile errors, see TestCELTypedCompileErrors).
func TestCELRootRule(t *testing.T) {
	s := crdtest.SpecWithRules()
	s.XValidations = apiextensionsv1.ValidationRules{{
		Rule:    "self.kind == 'Widget' && self.metadata.name.startsWith('w')",
		Message: "root view",
	}}
	v, errs := NewValidator(s, nil)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	for _, tc := range []struct {
		name string
		want int
	}{{"w1", 0}, {"x1", 1}} {
		obj := map[string]any{"kind": "Widget", "metadata": map[string]any{"name": tc.name, "labels": map[string]any{"a": "b"}}}
		if got := v.Validate(obj, nil); len(got) != tc.want {
			t.Errorf("name %s: got %v, want %d errors", tc.name, got, tc.want)
		}
		if _, ok := obj["metadata"].(map[string]any)["labels"]; !ok {
			t.Errorf("validate changed the object's metadata")
		}
	}
}

// TestCELTotalBudget checks that once one object's rules have used the
// budget, evaluation stops with upstream's message.
func TestCELTotalBudget(t *testing.T) {
	rules := make([]apiextensionsv1.ValidationRule, 5)
	for i := range rules {
		rules[i] = apiextensionsv1.ValidationRule{Rule: "self.list.all(x, x > 0)"}
	}
	v, errs := NewValidator(crdtest.SpecWithRules(rules...), nil)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	list := make([]any, 100)
	for i := range list {
		list[i] = int64(i + 1)
	}
	obj := map[string]any{"spec": map[string]any{"list": list}}
	if got := v.Validate(obj, nil); len(got) != 0 {
		t.Fatalf("with the full budget: got %v, want no errors", got)
	}
	v.budget = 500 // about two evaluations of the rule
	got := v.Validate(obj, nil)
	want := `spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run`
	if len(got) != 1 || got[0].Error() != want {
		t.Errorf("got %v, want [%s]", got, want)
	}
}

// compileErrors drops the static cost errors of errs: tests of run-time
// behaviour use rules the CRD validation would find too expensive.
func compileErrors(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Type == field.ErrorTypeForbidden && strings.Contains(e.Detail, "cost") {
			continue
		}
		if strings.Contains(e.Detail, "uncorrelatable") {
			continue
		}
		out = append(out, e)
	}
	return out
}
