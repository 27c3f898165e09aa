package cel

import (
	"slices"
	"sort"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func int64Ptr(n int64) *int64 { return &n }

func boolPtr(b bool) *bool { return &b }

// TestCELTypedRulesEval evaluates typed rules: values are converted to
// the schema's types (numbers, escaped names, formats), the libraries
// work, and optionalOldSelf rules run on create.
func TestCELTypedRulesEval(t *testing.T) {
	cases := []struct {
		name string
		rule apiextensionsv1.ValidationRule
		spec map[string]any
		old  map[string]any // old spec, on update
		want []string
	}{
		{name: "integral number is a double", rule: apiextensionsv1.ValidationRule{Rule: "self.ratio > 1.5", Message: "ratio"},
			spec: map[string]any{"ratio": int64(2)}},
		{name: "escaped names", rule: apiextensionsv1.ValidationRule{Rule: "self.x__dash__y == 'a' && self.__namespace__ == 'b' && self.a__dot__b == 'c'", Message: "escaped"},
			spec: map[string]any{"x-y": "a", "namespace": "b", "a.b": "c"}},
		{name: "escaped names false", rule: apiextensionsv1.ValidationRule{Rule: "self.x__dash__y == 'a'", Message: "escaped"},
			spec: map[string]any{"x-y": "b"},
			want: []string{`spec: Invalid value: escaped`}},
		{name: "date-time and duration", rule: apiextensionsv1.ValidationRule{Rule: "self.when + duration('1h') > timestamp('2024-01-01T00:30:00Z') && self.timeout == duration('90s')", Message: "times"},
			spec: map[string]any{"when": "2024-01-01T00:00:00Z", "timeout": "1m30s"}},
		{name: "date", rule: apiextensionsv1.ValidationRule{Rule: "self.day.getFullYear() == 2024", Message: "day"},
			spec: map[string]any{"day": "2024-03-01"}},
		{name: "bad date-time", rule: apiextensionsv1.ValidationRule{Rule: "self.when > timestamp('2000-01-01T00:00:00Z')", Message: "times"},
			spec: map[string]any{"when": "yesterday"},
			want: []string{`spec: Invalid value: "object": invalid date-time "yesterday": parsing time "yesterday" as "2006-01-02T15:04:05": cannot parse "yesterday" as "2006" evaluating rule: times`}},
		{name: "bytes", rule: apiextensionsv1.ValidationRule{Rule: "self.data == b'hi'", Message: "bytes"},
			spec: map[string]any{"data": "aGk="}},
		{name: "int-or-string", rule: apiextensionsv1.ValidationRule{Rule: "type(self.ios) == string ? self.ios.endsWith('%') : self.ios < 5", Message: "ios"},
			spec: map[string]any{"ios": "50"},
			want: []string{`spec: Invalid value: ios`}},
		{name: "int-or-string runtime overload", rule: apiextensionsv1.ValidationRule{Rule: "self.ios < 5", Message: "ios"},
			spec: map[string]any{"ios": "50"},
			want: []string{`spec: Invalid value: "object": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ios`}},
		{name: "list library", rule: apiextensionsv1.ValidationRule{Rule: "self.list.isSorted() && self.list.sum() == 6 && self.list.min() == 1 && self.list.max() == 3 && self.list.indexOf(2) == 1 && self.list.lastIndexOf(5) == -1", Message: "lists"},
			spec: map[string]any{"list": []any{int64(1), int64(2), int64(3)}}},
		{name: "list library unsorted", rule: apiextensionsv1.ValidationRule{Rule: "self.list.isSorted()", Message: "sorted"},
			spec: map[string]any{"list": []any{int64(2), int64(1)}},
			want: []string{`spec: Invalid value: sorted`}},
		{name: "min of empty list", rule: apiextensionsv1.ValidationRule{Rule: "self.list.min() > 0", Message: "min"},
			spec: map[string]any{"list": []any{}},
			want: []string{`spec: Invalid value: "object": min called on empty list evaluating rule: min`}},
		{name: "regex library", rule: apiextensionsv1.ValidationRule{Rule: "self.name.find('[0-9]+') == '12' && self.name.findAll('[a-z]') == ['a', 'b'] && self.name.findAll('[a-z]', 1) == ['a']", Message: "regex"},
			spec: map[string]any{"name": "a12b"}},
		// string(self.replicas) has no size bound upstream: a message
		// built from it is refused as too expensive (TestUpstreamCostEstimates).
		{name: "messageExpression with typed values", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas <= 10", MessageExpression: "'replicas ' + (self.replicas > 100 ? 'far ' : '') + 'above 10 in ' + self.tags.join(',')"},
			spec: map[string]any{"replicas": int64(11), "tags": []any{"a", "b"}},
			want: []string{`spec: Invalid value: replicas above 10 in a,b`}},
		{name: "optionalOldSelf on create", rule: apiextensionsv1.ValidationRule{Rule: "!oldSelf.hasValue() && self.replicas == 1", Message: "create", OptionalOldSelf: boolPtr(true)},
			spec: map[string]any{"replicas": int64(2)},
			want: []string{`spec: Invalid value: create`}},
		{name: "optionalOldSelf on update", rule: apiextensionsv1.ValidationRule{Rule: "oldSelf.hasValue() ? self.replicas >= oldSelf.value().replicas : true", Message: "no scale down", OptionalOldSelf: boolPtr(true)},
			spec: map[string]any{"replicas": int64(2)}, old: map[string]any{"replicas": int64(3)},
			want: []string{`spec: Invalid value: no scale down`}},
		{name: "set lists equal in any order", rule: apiextensionsv1.ValidationRule{Rule: "self.set == oldSelf.set && self.set != ['a']", Message: "set changed"},
			spec: map[string]any{"set": []any{"b", "a"}}, old: map[string]any{"set": []any{"a", "b"}}},
		{name: "set lists differ", rule: apiextensionsv1.ValidationRule{Rule: "self.set == oldSelf.set", Message: "set changed"},
			spec: map[string]any{"set": []any{"b", "c"}}, old: map[string]any{"set": []any{"a", "b"}},
			want: []string{`spec: Invalid value: set changed`}},
		{name: "map lists equal in any order", rule: apiextensionsv1.ValidationRule{Rule: "self.entries == oldSelf.entries", Message: "entries changed"},
			spec: map[string]any{"entries": []any{map[string]any{"name": "b", "value": "2"}, map[string]any{"name": "a", "value": "1"}}},
			old:  map[string]any{"entries": []any{map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "b", "value": "2"}}}},
		{name: "map lists differ in a value", rule: apiextensionsv1.ValidationRule{Rule: "self.entries == oldSelf.entries", Message: "entries changed"},
			spec: map[string]any{"entries": []any{map[string]any{"name": "b", "value": "3"}, map[string]any{"name": "a", "value": "1"}}},
			old:  map[string]any{"entries": []any{map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "b", "value": "2"}}},
			want: []string{`spec: Invalid value: entries changed`}},
		{name: "atomic lists compare in order", rule: apiextensionsv1.ValidationRule{Rule: "self.list == oldSelf.list", Message: "list changed"},
			spec: map[string]any{"list": []any{int64(2), int64(1)}}, old: map[string]any{"list": []any{int64(1), int64(2)}},
			want: []string{`spec: Invalid value: list changed`}},
		{name: "transition rule without optionalOldSelf skipped on create", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas >= oldSelf.replicas", Message: "no scale down"},
			spec: map[string]any{"replicas": int64(2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, errs := NewValidator(crdtest.TypedSchema(tc.rule), nil)
			if len(errs) > 0 {
				t.Fatalf("compile: %v", errs)
			}
			var old map[string]any
			if tc.old != nil {
				old = map[string]any{"spec": tc.old}
			}
			var got []string
			for _, e := range v.Validate(map[string]any{"spec": tc.spec}, old) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCELRatcheting checks that on update a failing rule on a value
// equal to its correlated old value is dropped, unless the rule uses
// oldSelf, and that changed or uncorrelated values still fail.
func TestCELRatcheting(t *testing.T) {
	s := crdtest.TypedSchema(
		apiextensionsv1.ValidationRule{Rule: "!has(self.replicas) || self.replicas < 10", Message: "too many"},
		apiextensionsv1.ValidationRule{Rule: "!has(self.replicas) || !has(oldSelf.replicas) || self.replicas == oldSelf.replicas", Message: "immutable replicas"},
	)
	spec := s.Properties["spec"]
	name := spec.Properties["name"]
	name.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size() < 3", Message: "long name"}}
	spec.Properties["name"] = name
	s.Properties["spec"] = spec
	s = crdtest.WithItemRule(s, "entries", apiextensionsv1.ValidationRule{Rule: "self.value != 'bad'", Message: "bad entry"})
	v, errs := NewValidator(s, nil)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	entry := func(n, val string) map[string]any { return map[string]any{"name": n, "value": val} }
	cases := []struct {
		name     string
		spec     map[string]any
		old      map[string]any
		want     []string
		wantSort bool
	}{
		{name: "create fails", spec: map[string]any{"replicas": int64(20), "name": "long"},
			want: []string{`spec: Invalid value: too many`, `spec.name: Invalid value: "long": long name`}, wantSort: true},
		{name: "unchanged invalid values ratchet", spec: map[string]any{"replicas": int64(20), "name": "long", "entries": []any{entry("a", "bad")}},
			old: map[string]any{"replicas": int64(20), "name": "long", "entries": []any{entry("a", "bad")}}},
		{name: "unchanged name ratchets while spec changed", spec: map[string]any{"replicas": int64(5), "name": "long"},
			old:  map[string]any{"replicas": int64(20), "name": "long"},
			want: []string{`spec: Invalid value: immutable replicas`}},
		{name: "changed value fails", spec: map[string]any{"replicas": int64(20), "name": "longer"},
			old:  map[string]any{"replicas": int64(20), "name": "long"},
			want: []string{`spec: Invalid value: too many`, `spec.name: Invalid value: "longer": long name`}, wantSort: true},
		{name: "moved map-list item ratchets, new bad item fails",
			spec: map[string]any{"entries": []any{entry("b", "bad"), entry("a", "bad")}},
			old:  map[string]any{"entries": []any{entry("a", "bad")}},
			want: []string{`spec.entries[0]: Invalid value: bad entry`}},
		{name: "new value without old fails", spec: map[string]any{"name": "long"}, old: map[string]any{},
			want: []string{`spec.name: Invalid value: "long": long name`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old map[string]any
			if tc.old != nil {
				old = map[string]any{"spec": tc.old}
			}
			var got []string
			for _, e := range v.Validate(map[string]any{"spec": tc.spec}, old) {
				got = append(got, e.Error())
			}
			if tc.wantSort {
				sort.Strings(got)
				sort.Strings(tc.want)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzCELCompile compiles arbitrary rules against a fixed schema and
// evaluates those that compile: neither may panic, and a rule that
// compiles without errors evaluates to a result or an error.
func FuzzCELCompile(f *testing.F) {
	for _, s := range []string{
		"self.replicas > 0", "self.name + 1", "has(self.nope)", "self.list.all(x, x > 0)", "self.tags.isSorted()",
		"self.labels.exists(k, k == 'a')", "oldSelf.replicas == self.replicas", "self.when < now", "'a'.findAll('[')",
		"self.entries.map(e, e.name).size() > 0", "self.ios == 1 ? true : self.ios == 'x'", "self.list.min() < self.list.max()",
		"", "(((", "self.__namespace__ == ''", "self.set == oldSelf.set", "self.entries == oldSelf.entries", "self.data.size() > 0", "[1, 'a']", "self.timeout > duration('1s')",
	} {
		f.Add(s)
	}
	obj := map[string]any{"spec": map[string]any{
		"replicas": int64(1), "name": "ab", "ratio": 0.5, "ios": "5%", "when": "2024-01-01T00:00:00Z", "timeout": "1s",
		"data": "aGk=", "list": []any{int64(1), int64(2)}, "tags": []any{"a", "b"}, "labels": map[string]any{"a": "b"},
		"entries": []any{map[string]any{"name": "a", "value": "b"}}, "namespace": "x", "set": []any{"a", "b"},
	}}
	f.Fuzz(func(t *testing.T, rule string) {
		v, _ := NewValidator(crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: rule}), nil)
		if v == nil {
			return
		}
		_ = v.Validate(obj, nil)
		_ = v.Validate(obj, obj)
	})
}
