package apiextensions

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestCELCompileErrorsInCRD checks that rules that do not compile make
// the CRD invalid.
func TestCELCompileErrorsInCRD(t *testing.T) {
	cases := []struct {
		name string
		rule apiextensionsv1.ValidationRule
		want string
	}{
		// The values are the internal ValidationRule as kube-apiserver v1.37.2
		// renders it (JSON with Go field names, < escaped).
		{name: "syntax", rule: apiextensionsv1.ValidationRule{Rule: "self.replicas <="},
			want: `spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.replicas \u003c=","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:17: Syntax error: `},
		{name: "messageExpression", rule: apiextensionsv1.ValidationRule{Rule: "true", MessageExpression: "1 +"},
			want: `spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: {"Rule":"true","Message":"","MessageExpression":"1 +","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression compilation failed: ERROR: <input>:1:4: Syntax error: `},
		{name: "messageExpression not a string", rule: apiextensionsv1.ValidationRule{Rule: "true", MessageExpression: "1 + 2"},
			want: `x-kubernetes-validations[0].messageExpression: Invalid value: {"Rule":"true","Message":"","MessageExpression":"1 + 2","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate to a string`},
		{name: "fieldPath not in schema", rule: apiextensionsv1.ValidationRule{Rule: "true", FieldPath: ".nope"},
			want: `x-kubernetes-validations[0].fieldPath: Invalid value: ".nope": does not refer to a valid field`},
		{name: "bad fieldPath", rule: apiextensionsv1.ValidationRule{Rule: "true", FieldPath: "name"},
			want: `x-kubernetes-validations[0].fieldPath: Invalid value: "name": must start with '.' or '['`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := crdtest.ValidCRD()
			c.Spec.Versions[0].Schema.OpenAPIV3Schema = crdtest.SpecWithRules(tc.rule)
			got := validateCRD(c, nil).ToAggregate()
			if got == nil || !strings.Contains(got.Error(), tc.want) {
				t.Errorf("got %v, want it to contain %q", got, tc.want)
			}
		})
	}
	c := crdtest.ValidCRD()
	c.Spec.Versions[0].Schema.OpenAPIV3Schema = crdtest.SpecWithRules(apiextensionsv1.ValidationRule{Rule: "self.replicas <= self.maxReplicas"})
	if got := validateCRD(c, nil); len(got) != 0 {
		t.Errorf("got %v for a valid rule, want none", got)
	}
}

func int64Ptr(n int64) *int64 { return &n }

func boolPtr(b bool) *bool { return &b }

const costHint = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"

// TestCELTypedCRDValidation checks the CRD validation of rules against
// the types derived from the schema, their static cost, and where oldSelf
// may be used, with upstream's messages.
func TestCELTypedCRDValidation(t *testing.T) {
	rv := func(rule string) string {
		// The internal ValidationRule as json.Marshal renders it: kube-apiserver
		// v1.37.2 answers this form (< escaped as \u003c).
		r, err := json.Marshal(rule)
		if err != nil {
			t.Fatal(err)
		}
		return `{"Rule":` + string(r) + `,"Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}`
	}
	const spec = "spec.validation.openAPIV3Schema.properties[spec]."
	tagRules := make([]apiextensionsv1.ValidationRule, 13)
	for i := range tagRules {
		tagRules[i] = apiextensionsv1.ValidationRule{Rule: "self.matches('^[a-z]+$')"}
	}
	cases := []struct {
		name   string
		schema *apiextensionsv1.JSONSchemaProps
		want   []string // exact errors; none: valid
	}{
		{name: "type error", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.name + 1 == 'x'"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.name + 1 == 'x'`) +
				": compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'\n | self.name + 1 == 'x'\n | ..........^"}},
		{name: "double plus int", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.ratio + 1 > 2.0"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.ratio + 1 > 2.0`) +
				": compilation failed: ERROR: <input>:1:12: found no matching overload for '_+_' applied to '(double, int)'\n | self.ratio + 1 > 2.0\n | ...........^"}},
		{name: "undeclared field", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.nope == 1"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.nope == 1`) +
				": compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"}},
		{name: "has of undeclared field", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "has(self.nope)"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`has(self.nope)`) +
				": compilation failed: ERROR: <input>:1:4: undefined field 'nope'\n | has(self.nope)\n | ...^"}},
		{name: "preserve-unknown object hides unknown fields", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "has(self.free.x)"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`has(self.free.x)`) +
				": compilation failed: ERROR: <input>:1:4: undefined field 'x'\n | has(self.free.x)\n | ...^"}},
		{name: "not a bool", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.replicas"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.replicas`) + ": cel expression must evaluate to a bool"}},
		{name: "unescapable name is not declared", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.a__b == ''"}),
			want: []string{spec + "x-kubernetes-validations[0].rule: Invalid value: " + rv(`self.a__b == ''`) +
				": compilation failed: ERROR: <input>:1:5: undefined field 'a__b'\n | self.a__b == ''\n | ....^"}},
		{name: "typed rules", schema: crdtest.TypedSchema(
			apiextensionsv1.ValidationRule{Rule: "has(self.name) && self.name.startsWith('a') && self.replicas > 0 && self.ratio < 1.5 && self.enabled"},
			apiextensionsv1.ValidationRule{Rule: "self.ios == 1 || self.ios == 'a'"},
			apiextensionsv1.ValidationRule{Rule: "self.when < timestamp('2030-01-01T00:00:00Z') && self.day > timestamp('2000-01-01T00:00:00Z')"},
			apiextensionsv1.ValidationRule{Rule: "self.timeout < duration('1h') && size(self.data) < 10"},
			apiextensionsv1.ValidationRule{Rule: "self.x__dash__y == self.__namespace__ && self.a__dot__b == ''"},
			apiextensionsv1.ValidationRule{Rule: "self.tags.isSorted() && self.tags.indexOf('a') <= self.tags.lastIndexOf('a')"},
			apiextensionsv1.ValidationRule{Rule: "self.list.sum() >= 0 && self.labels.all(k, self.labels[k].find('[a-z]+') != '' && self.labels[k].findAll('x', 2).size() < 3)"},
			apiextensionsv1.ValidationRule{Rule: "self.entries.all(e, has(e.value) ? e.value != e.name : true)"},
			apiextensionsv1.ValidationRule{Rule: "self.replicas <= 10", MessageExpression: "'replicas above 10 for ' + self.x__dash__y"},
			apiextensionsv1.ValidationRule{Rule: "!has(oldSelf.name) || self.name == oldSelf.name", OptionalOldSelf: boolPtr(false)},
			apiextensionsv1.ValidationRule{Rule: "oldSelf.hasValue() ? self.replicas >= oldSelf.value().replicas : true", OptionalOldSelf: boolPtr(true)},
		)},
		{name: "optionalOldSelf without oldSelf", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.replicas > 0", OptionalOldSelf: boolPtr(true)}),
			want: []string{spec + "x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"}},
		// kube-apiserver v1.37.2 (probed 2026-11-28): a rule that fails to
		// compile, or is not a bool, is not known to use oldSelf, so a set
		// optionalOldSelf (true or false) is refused beside its error.
		{name: "optionalOldSelf on rules that fail", schema: crdtest.TypedSchema(
			apiextensionsv1.ValidationRule{Rule: "self.nope == 'x'", OptionalOldSelf: boolPtr(true)},
			apiextensionsv1.ValidationRule{Rule: "self.name", OptionalOldSelf: boolPtr(false)},
		),
			want: []string{
				spec + "x-kubernetes-validations[0].rule: Invalid value: " + strings.Replace(rv(`self.nope == 'x'`), `"OptionalOldSelf":null`, `"OptionalOldSelf":true`, 1) +
					": compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 'x'\n | ....^",
				spec + "x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
				spec + "x-kubernetes-validations[1].rule: Invalid value: " + strings.Replace(rv(`self.name`), `"OptionalOldSelf":null`, `"OptionalOldSelf":false`, 1) +
					": cel expression must evaluate to a bool",
				spec + "x-kubernetes-validations[1].optionalOldSelf: Invalid value: false: may not be set if oldSelf is not used in rule",
			}},
		{name: "oldSelf in items of an atomic list", schema: crdtest.WithItemRule(crdtest.TypedSchema(), "atomics", apiextensionsv1.ValidationRule{Rule: "self.value == oldSelf.value"}),
			want: []string{spec + "properties[atomics].items.x-kubernetes-validations[0].rule: Invalid value: \"self.value == oldSelf.value\": oldSelf cannot be used on the uncorrelatable portion of the schema within " + strings.TrimSuffix(spec, ".") + ".properties[atomics]"}},
		{name: "oldSelf in items of a map list", schema: crdtest.WithItemRule(crdtest.TypedSchema(), "entries", apiextensionsv1.ValidationRule{Rule: "self.value == oldSelf.value"})},
		{name: "rule cost above the limit", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.list.all(x, self.list.all(y, x == y))"}),
			want: []string{
				spec + "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x" + costHint,
				spec + "x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x" + costHint,
			}},
		{name: "bounded rule cost", schema: crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.tags.all(x, self.tags.all(y, x == y || x != y))"})},
		{name: "total cost above the limit", schema: tagsSchema(10000, 1000, tagRules),
			want: []string{
				spec + "properties[tags].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				spec + "properties[tags].items.x-kubernetes-validations[1].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				spec + "properties[tags].items.x-kubernetes-validations[2].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				spec + "properties[tags].items.x-kubernetes-validations[3].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.043900x" + costHint,
			}},
		{name: "total cost within the limit", schema: tagsSchema(10000, 1000, tagRules[:12])},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := crdtest.ValidCRD()
			c.Spec.Versions[0].Schema.OpenAPIV3Schema = tc.schema
			var got []string
			for _, e := range validateCRD(c, nil) {
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

// TestCELRulesOnCRDUpdate checks that on update a version whose schema
// did not change is not checked again (a CRD stored before the checks
// can still be updated, e.g. to remove a finalizer), and a changed one
// is.
func TestCELRulesOnCRDUpdate(t *testing.T) {
	old := crdtest.ValidCRD()
	old.Spec.Versions[0].Schema.OpenAPIV3Schema = crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.name + 1 == 'x'"})
	crd := old.DeepCopy()
	crd.Labels = map[string]string{"a": "b"}
	if got := validateCRDUpdate(crd, old, nil); len(got) != 0 {
		t.Errorf("unchanged schema: got %v, want no errors", got)
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "self.name + 2 == 'x'"})
	got := validateCRDUpdate(crd, old, nil)
	if want := "found no matching overload for '_+_' applied to '(string, int)'"; len(got) != 1 || !strings.Contains(got[0].Error(), want) {
		t.Errorf("changed schema: got %v, want one error containing %q", got, want)
	}
}

// celCompileErrors compiles rule on typedSchema's spec and returns the
// CRD validation's errors.
func celCompileErrors(rule string) []string {
	c := crdtest.ValidCRD()
	c.Spec.Versions[0].Schema.OpenAPIV3Schema = crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: rule})
	var out []string
	for _, e := range validateCRD(c, nil) {
		out = append(out, e.Error())
	}
	return out
}

// TestCELLibraryCompileErrors checks that the libraries' functions are
// type-checked: wrong argument types and unknown members are rejected at
// CRD validation.
func TestCELLibraryCompileErrors(t *testing.T) {
	cases := []struct {
		rule string
		want string // in the single error
	}{
		{rule: "quantity(1) == quantity('1')", want: "found no matching overload for 'quantity' applied to '(int)'"},
		{rule: "quantity('1').add('1') == quantity('2')", want: "found no matching overload for 'add' applied to 'kubernetes.Quantity.(string)'"},
		{rule: "quantity('1') == 1", want: "found no matching overload for '_==_' applied to '(kubernetes.Quantity, int)'"},
		{rule: "ip('1.2.3.4').containsIP('1.2.3.4')", want: "found no matching overload for 'containsIP' applied to 'net.IP.(string)'"},
		{rule: "url('http://a').getQuery() == 'x'", want: "found no matching overload for '_==_'"},
		{rule: "format.nope().validate('a').hasValue()", want: "undeclared reference to 'format.nope'"},
		{rule: "semver('1.0.0').isLessThan(quantity('1'))", want: "found no matching overload for 'isLessThan' applied to 'kubernetes.Semver.(kubernetes.Quantity)'"},
		{rule: "image('nginx').registry() == ''", want: "undeclared reference to 'image'"},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			got := celCompileErrors(tc.rule)
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("got %q, want one error containing %q", got, tc.want)
			}
		})
	}
}

// TestCELLibraryStaticCost checks the static cost of the libraries'
// calls: parsing and comparing values of bounded or unbounded strings
// is accepted, validating an unbounded string against a format with a
// long regular expression is not.
func TestCELLibraryStaticCost(t *testing.T) {
	const spec = "spec.validation.openAPIV3Schema.properties[spec]."
	cases := []struct {
		rule string
		want []string
	}{
		{rule: "quantity(self.name) == quantity('1') && isQuantity(self.name) && quantity(self.name).add(1).isLessThan(quantity('2'))"},
		{rule: "ip(self.name) == ip('1.2.3.4') && isIP(self.name) && ip.isCanonical(self.name) && cidr(self.name).containsIP(self.name) && cidr(self.name).containsCIDR(self.name)"},
		{rule: "url(self.name) == url('http://a') && isURL(self.name) && url(self.name).getQuery().size() > 0"},
		{rule: "semver(self.name) == semver('1.0.0') && isSemver(self.name, true)"},
		{rule: "self.tags.all(t, quantity(t).isLessThan(quantity('1')) && isCIDR(t) && !format.uri().validate(t).hasValue())"},
		// Upstream estimates every format's regex at 128 characters (and
		// charges each its own at run time): on an unbounded string, any
		// format is above the limit.
		{rule: "!format.dns1123Label().validate(self.name).hasValue()", want: []string{
			spec + "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.006634x" + costHint}},
		{rule: "!format.uri().validate(self.name).hasValue()", want: []string{
			spec + "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.006634x" + costHint}},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			if got := celCompileErrors(tc.rule); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
