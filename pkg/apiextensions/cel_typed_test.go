package apiextensions

import (
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func int64Ptr(n int64) *int64 { return &n }

func boolPtr(b bool) *bool { return &b }

func strPtr(s string) *string { return &s }

// typedSchema is a schema whose spec has a property of each kind CEL
// types differently, and carries rules.
func typedSchema(rules ...apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	item := apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"name"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"name": str, "value": str,
	}}
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type:         "object",
				XValidations: rules,
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"name":      str,
					"replicas":  {Type: "integer"},
					"ratio":     {Type: "number"},
					"enabled":   {Type: "boolean"},
					"ios":       {XIntOrString: true},
					"when":      {Type: "string", Format: "date-time"},
					"day":       {Type: "string", Format: "date"},
					"timeout":   {Type: "string", Format: "duration"},
					"data":      {Type: "string", Format: "byte"},
					"x-y":       str,
					"namespace": str,
					"a.b":       str,
					"a b":       str,
					"list":      {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer"}}},
					"tags":      {Type: "array", MaxItems: int64Ptr(10), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: int64Ptr(20)}}},
					"labels": {Type: "object", MaxProperties: int64Ptr(10), AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{
						Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: int64Ptr(20)},
					}},
					"entries": {Type: "array", XListType: strPtr("map"), XListMapKeys: []string{"name"}, MaxItems: int64Ptr(10),
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}},
					"atomics": {Type: "array", MaxItems: int64Ptr(10), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}},
					"set": {Type: "array", XListType: strPtr("set"), MaxItems: int64Ptr(10),
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: int64Ptr(10)}}},
					"free": {Type: "object", XPreserveUnknownFields: boolPtr(true)},
				},
			},
		},
	}
}

// withItemRule adds a rule to the items of spec's list property.
func withItemRule(s *apiextensionsv1.JSONSchemaProps, list string, r apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	spec := s.Properties["spec"]
	l := spec.Properties[list]
	it := *l.Items.Schema
	it.XValidations = append(it.XValidations, r)
	l.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &it}
	spec.Properties[list] = l
	s.Properties["spec"] = spec
	return s
}

const costHint = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"

// TestCELTypedCRDValidation checks the CRD validation of rules against
// the types derived from the schema, their static cost, and where oldSelf
// may be used, with upstream's messages.
func TestCELTypedCRDValidation(t *testing.T) {
	rv := func(rule string) string {
		return `apiextensions.ValidationRule{Rule:"` + rule + `", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`
	}
	const spec = "spec.versions[0].schema.openAPIV3Schema.properties[spec]."
	tagRules := make([]apiextensionsv1.ValidationRule, 13)
	for i := range tagRules {
		tagRules[i] = apiextensionsv1.ValidationRule{Rule: "self.matches('^[a-z]+$')"}
	}
	cases := []struct {
		name   string
		schema *apiextensionsv1.JSONSchemaProps
		want   []string // exact errors; none: valid
	}{
		{name: "type error", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.name + 1 == 'x'"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.name + 1 == 'x'`) +
				": compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'\n | self.name + 1 == 'x'\n | ..........^"}},
		{name: "double plus int", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.ratio + 1 > 2.0"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.ratio + 1 > 2.0`) +
				": compilation failed: ERROR: <input>:1:12: found no matching overload for '_+_' applied to '(double, int)'\n | self.ratio + 1 > 2.0\n | ...........^"}},
		{name: "undeclared field", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.nope == 1"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.nope == 1`) +
				": compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"}},
		{name: "has of undeclared field", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "has(self.nope)"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`has(self.nope)`) +
				": compilation failed: ERROR: <input>:1:4: undefined field 'nope'\n | has(self.nope)\n | ...^"}},
		{name: "preserve-unknown object hides unknown fields", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "has(self.free.x)"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`has(self.free.x)`) +
				": compilation failed: ERROR: <input>:1:4: undefined field 'x'\n | has(self.free.x)\n | ...^"}},
		{name: "not a bool", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.replicas"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.replicas`) + ": cel expression must evaluate to a bool"}},
		{name: "unescapable name is not declared", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.a__b == ''"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.a__b == ''`) +
				": compilation failed: ERROR: <input>:1:5: undefined field 'a__b'\n | self.a__b == ''\n | ....^"}},
		{name: "typed rules", schema: typedSchema(
			apiextensionsv1.ValidationRule{Rule: "has(self.name) && self.name.startsWith('a') && self.replicas > 0 && self.ratio < 1.5 && self.enabled"},
			apiextensionsv1.ValidationRule{Rule: "self.ios == 1 || self.ios == 'a'"},
			apiextensionsv1.ValidationRule{Rule: "self.when < timestamp('2030-01-01T00:00:00Z') && self.day > timestamp('2000-01-01T00:00:00Z')"},
			apiextensionsv1.ValidationRule{Rule: "self.timeout < duration('1h') && size(self.data) < 10"},
			apiextensionsv1.ValidationRule{Rule: "self.x__dash__y == self.__namespace__ && self.a__dot__b == ''"},
			apiextensionsv1.ValidationRule{Rule: "self.tags.isSorted() && self.tags.indexOf('a') <= self.tags.lastIndexOf('a') && self.tags.min() <= self.tags.max()"},
			apiextensionsv1.ValidationRule{Rule: "self.list.sum() >= 0 && self.labels.all(k, self.labels[k].find('[a-z]+') != '' && self.labels[k].findAll('x', 2).size() < 3)"},
			apiextensionsv1.ValidationRule{Rule: "self.entries.all(e, has(e.value) ? e.value != e.name : true)"},
			apiextensionsv1.ValidationRule{Rule: "self.replicas <= 10", MessageExpression: "'replicas ' + string(self.replicas) + ' above 10'"},
			apiextensionsv1.ValidationRule{Rule: "!has(oldSelf.name) || self.name == oldSelf.name", OptionalOldSelf: boolPtr(false)},
			apiextensionsv1.ValidationRule{Rule: "oldSelf.hasValue() ? self.replicas >= oldSelf.value().replicas : true", OptionalOldSelf: boolPtr(true)},
		)},
		{name: "optionalOldSelf without oldSelf", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.replicas > 0", OptionalOldSelf: boolPtr(true)}),
			want: []string{spec + "x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"}},
		{name: "oldSelf in items of an atomic list", schema: withItemRule(typedSchema(), "atomics", apiextensionsv1.ValidationRule{Rule: "self.value == oldSelf.value"}),
			want: []string{spec + "properties[atomics].items.x-kubernetes-validations[0].rule: Invalid value: \"self.value == oldSelf.value\": oldSelf cannot be used on the uncorrelatable portion of the schema within " + strings.TrimSuffix(spec, ".") + ".properties[atomics]"}},
		{name: "oldSelf in items of a map list", schema: withItemRule(typedSchema(), "entries", apiextensionsv1.ValidationRule{Rule: "self.value == oldSelf.value"})},
		{name: "rule cost above the limit", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.list.all(x, self.list.all(y, x == y))"}),
			want: []string{
				spec + "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x" + costHint,
				spec + "x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x" + costHint,
			}},
		{name: "bounded rule cost", schema: typedSchema(apiextensionsv1.ValidationRule{Rule: "self.tags.all(x, self.tags.all(y, x == y || x != y))"})},
		{name: "total cost above the limit", schema: tagsSchema(10000, 1000, tagRules),
			want: []string{
				spec + "properties[tags].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
				spec + "properties[tags].items.x-kubernetes-validations[1].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
				spec + "properties[tags].items.x-kubernetes-validations[2].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
				spec + "properties[tags].items.x-kubernetes-validations[3].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.042600x" + costHint,
			}},
		{name: "total cost within the limit", schema: tagsSchema(10000, 1000, tagRules[:12])},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validCRD()
			c.Spec.Versions[0].Schema.OpenAPIV3Schema = tc.schema
			var got []string
			for _, e := range validateCRD(c) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q,\nwant %q", got, tc.want)
			}
		})
	}
}

// tagsSchema has a list of strings (maxItems, maxLength) whose items
// carry rules.
func tagsSchema(maxItems, maxLength int64, rules []apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	return &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"tags": {Type: "array", MaxItems: int64Ptr(maxItems), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "string", MaxLength: int64Ptr(maxLength), XValidations: rules}}},
		}},
	}}
}

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
			want: []string{`spec: Invalid value: "object": escaped`}},
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
			want: []string{`spec: Invalid value: "object": ios`}},
		{name: "int-or-string runtime overload", rule: apiextensionsv1.ValidationRule{Rule: "self.ios < 5", Message: "ios"},
			spec: map[string]any{"ios": "50"},
			want: []string{`spec: Invalid value: "object": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ios`}},
		{name: "list library", rule: apiextensionsv1.ValidationRule{Rule: "self.list.isSorted() && self.list.sum() == 6 && self.list.min() == 1 && self.list.max() == 3 && self.list.indexOf(2) == 1 && self.list.lastIndexOf(5) == -1", Message: "lists"},
			spec: map[string]any{"list": []any{int64(1), int64(2), int64(3)}}},
		{name: "list library unsorted", rule: apiextensionsv1.ValidationRule{Rule: "self.list.isSorted()", Message: "sorted"},
			spec: map[string]any{"list": []any{int64(2), int64(1)}},
			want: []string{`spec: Invalid value: "object": sorted`}},
		{name: "min of empty list", rule: apiextensionsv1.ValidationRule{Rule: "self.list.min() > 0", Message: "min"},
			spec: map[string]any{"list": []any{}},
			want: []string{`spec: Invalid value: "object": min called on empty list evaluating rule: min`}},
		{name: "regex library", rule: apiextensionsv1.ValidationRule{Rule: "self.name.find('[0-9]+') == '12' && self.name.findAll('[a-z]') == ['a', 'b'] && self.name.findAll('[a-z]', 1) == ['a']", Message: "regex"},
			spec: map[string]any{"name": "a12b"}},
		{name: "messageExpression with typed values", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas <= 10", MessageExpression: "'replicas ' + string(self.replicas) + ' above 10'"},
			spec: map[string]any{"replicas": int64(11)},
			want: []string{`spec: Invalid value: "object": replicas 11 above 10`}},
		{name: "optionalOldSelf on create", rule: apiextensionsv1.ValidationRule{Rule: "!oldSelf.hasValue() && self.replicas == 1", Message: "create", OptionalOldSelf: boolPtr(true)},
			spec: map[string]any{"replicas": int64(2)},
			want: []string{`spec: Invalid value: "object": create`}},
		{name: "optionalOldSelf on update", rule: apiextensionsv1.ValidationRule{Rule: "oldSelf.hasValue() ? self.replicas >= oldSelf.value().replicas : true", Message: "no scale down", OptionalOldSelf: boolPtr(true)},
			spec: map[string]any{"replicas": int64(2)}, old: map[string]any{"replicas": int64(3)},
			want: []string{`spec: Invalid value: "object": no scale down`}},
		{name: "set lists equal in any order", rule: apiextensionsv1.ValidationRule{Rule: "self.set == oldSelf.set && self.set != ['a']", Message: "set changed"},
			spec: map[string]any{"set": []any{"b", "a"}}, old: map[string]any{"set": []any{"a", "b"}}},
		{name: "set lists differ", rule: apiextensionsv1.ValidationRule{Rule: "self.set == oldSelf.set", Message: "set changed"},
			spec: map[string]any{"set": []any{"b", "c"}}, old: map[string]any{"set": []any{"a", "b"}},
			want: []string{`spec: Invalid value: "object": set changed`}},
		{name: "map lists equal in any order", rule: apiextensionsv1.ValidationRule{Rule: "self.entries == oldSelf.entries", Message: "entries changed"},
			spec: map[string]any{"entries": []any{map[string]any{"name": "b", "value": "2"}, map[string]any{"name": "a", "value": "1"}}},
			old:  map[string]any{"entries": []any{map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "b", "value": "2"}}}},
		{name: "map lists differ in a value", rule: apiextensionsv1.ValidationRule{Rule: "self.entries == oldSelf.entries", Message: "entries changed"},
			spec: map[string]any{"entries": []any{map[string]any{"name": "b", "value": "3"}, map[string]any{"name": "a", "value": "1"}}},
			old:  map[string]any{"entries": []any{map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "b", "value": "2"}}},
			want: []string{`spec: Invalid value: "object": entries changed`}},
		{name: "atomic lists compare in order", rule: apiextensionsv1.ValidationRule{Rule: "self.list == oldSelf.list", Message: "list changed"},
			spec: map[string]any{"list": []any{int64(2), int64(1)}}, old: map[string]any{"list": []any{int64(1), int64(2)}},
			want: []string{`spec: Invalid value: "object": list changed`}},
		{name: "transition rule without optionalOldSelf skipped on create", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas >= oldSelf.replicas", Message: "no scale down"},
			spec: map[string]any{"replicas": int64(2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, errs := newCELValidator(typedSchema(tc.rule), nil)
			if len(errs) > 0 {
				t.Fatalf("compile: %v", errs)
			}
			var old map[string]any
			if tc.old != nil {
				old = map[string]any{"spec": tc.old}
			}
			var got []string
			for _, e := range v.validate(map[string]any{"spec": tc.spec}, old) {
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
	s := typedSchema(
		apiextensionsv1.ValidationRule{Rule: "!has(self.replicas) || self.replicas < 10", Message: "too many"},
		apiextensionsv1.ValidationRule{Rule: "!has(self.replicas) || !has(oldSelf.replicas) || self.replicas == oldSelf.replicas", Message: "immutable replicas"},
	)
	spec := s.Properties["spec"]
	name := spec.Properties["name"]
	name.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size() < 3", Message: "long name"}}
	spec.Properties["name"] = name
	s.Properties["spec"] = spec
	s = withItemRule(s, "entries", apiextensionsv1.ValidationRule{Rule: "self.value != 'bad'", Message: "bad entry"})
	v, errs := newCELValidator(s, nil)
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
			want: []string{`spec: Invalid value: "object": too many`, `spec.name: Invalid value: "string": long name`}, wantSort: true},
		{name: "unchanged invalid values ratchet", spec: map[string]any{"replicas": int64(20), "name": "long", "entries": []any{entry("a", "bad")}},
			old: map[string]any{"replicas": int64(20), "name": "long", "entries": []any{entry("a", "bad")}}},
		{name: "unchanged name ratchets while spec changed", spec: map[string]any{"replicas": int64(5), "name": "long"},
			old:  map[string]any{"replicas": int64(20), "name": "long"},
			want: []string{`spec: Invalid value: "object": immutable replicas`}},
		{name: "changed value fails", spec: map[string]any{"replicas": int64(20), "name": "longer"},
			old:  map[string]any{"replicas": int64(20), "name": "long"},
			want: []string{`spec: Invalid value: "object": too many`, `spec.name: Invalid value: "string": long name`}, wantSort: true},
		{name: "moved map-list item ratchets, new bad item fails",
			spec: map[string]any{"entries": []any{entry("b", "bad"), entry("a", "bad")}},
			old:  map[string]any{"entries": []any{entry("a", "bad")}},
			want: []string{`spec.entries[0]: Invalid value: "object": bad entry`}},
		{name: "new value without old fails", spec: map[string]any{"name": "long"}, old: map[string]any{},
			want: []string{`spec.name: Invalid value: "string": long name`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old map[string]any
			if tc.old != nil {
				old = map[string]any{"spec": tc.old}
			}
			var got []string
			for _, e := range v.validate(map[string]any{"spec": tc.spec}, old) {
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

// TestSchemaRatcheting checks that on update OpenAPI schema errors of
// unchanged values are dropped, and those of changed values kept.
func TestSchemaRatcheting(t *testing.T) {
	s := typedSchema()
	spec := s.Properties["spec"]
	spec.Required = []string{"name"}
	name := spec.Properties["name"]
	name.MaxLength = int64Ptr(3)
	spec.Properties["name"] = name
	rep := spec.Properties["replicas"]
	rep.Maximum = &[]float64{10}[0]
	spec.Properties["replicas"] = rep
	s.Properties["spec"] = spec
	s = withItemRule(s, "entries", apiextensionsv1.ValidationRule{Rule: "true"})
	entries := s.Properties["spec"].Properties["entries"]
	entries.Items.Schema.Properties["value"] = apiextensionsv1.JSONSchemaProps{Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"ok"`)}}}
	sv, err := newSchemaValidator(s)
	if err != nil {
		t.Fatal(err)
	}
	entry := func(n, val string) map[string]any { return map[string]any{"name": n, "value": val} }
	cases := []struct {
		name string
		spec map[string]any
		old  map[string]any
		want []string
	}{
		{name: "unchanged invalid values", spec: map[string]any{"name": "toolong", "replicas": int64(20), "entries": []any{entry("a", "bad")}, "enabled": true},
			old: map[string]any{"name": "toolong", "replicas": int64(20), "entries": []any{entry("a", "bad")}, "enabled": false}},
		{name: "missing required of unchanged object", spec: map[string]any{"replicas": int64(1)}, old: map[string]any{"replicas": int64(1)}},
		{name: "missing required of changed object", spec: map[string]any{"replicas": int64(2)}, old: map[string]any{"replicas": int64(1)},
			want: []string{`spec.name: Required value`}},
		{name: "changed invalid value", spec: map[string]any{"name": "toolong", "replicas": int64(21)}, old: map[string]any{"name": "toolong", "replicas": int64(20)},
			want: []string{`spec.replicas: Invalid value: 21: spec.replicas in body should be less than or equal to 10`}},
		{name: "new map-list item", spec: map[string]any{"name": "a", "entries": []any{entry("b", "bad"), entry("a", "bad")}}, old: map[string]any{"name": "a", "entries": []any{entry("a", "bad")}},
			want: []string{`spec.entries[0].value: Unsupported value: "bad": supported values: "ok"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range sv.validateUpdate(map[string]any{"spec": tc.spec}, map[string]any{"spec": tc.old}, s) {
				got = append(got, e.Error())
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
		v, _ := newCELValidator(typedSchema(apiextensionsv1.ValidationRule{Rule: rule}), nil)
		if v == nil {
			return
		}
		_ = v.validate(obj, nil)
		_ = v.validate(obj, obj)
	})
}

// TestCELRulesOnCRDUpdate checks that on update a version whose schema
// did not change is not checked again (a CRD stored before the checks
// can still be updated, e.g. to remove a finalizer), and a changed one
// is.
func TestCELRulesOnCRDUpdate(t *testing.T) {
	old := validCRD()
	old.Spec.Versions[0].Schema.OpenAPIV3Schema = typedSchema(apiextensionsv1.ValidationRule{Rule: "self.name + 1 == 'x'"})
	crd := old.DeepCopy()
	crd.Labels = map[string]string{"a": "b"}
	if got := validateCRDUpdate(crd, old); len(got) != 0 {
		t.Errorf("unchanged schema: got %v, want no errors", got)
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = typedSchema(apiextensionsv1.ValidationRule{Rule: "self.name + 2 == 'x'"})
	got := validateCRDUpdate(crd, old)
	if want := "found no matching overload for '_+_' applied to '(string, int)'"; len(got) != 1 || !strings.Contains(got[0].Error(), want) {
		t.Errorf("changed schema: got %v, want one error containing %q", got, want)
	}
}
