package apiextensions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// celLibCase is a rule on typedSchema's spec evaluated with spec: want
// is "" when the rule holds, "false" when it does not, else the
// evaluation error (the text before " evaluating rule").
type celLibCase struct {
	rule string
	spec map[string]any
	want string
}

// runCELLibCases compiles each rule through kapi's environment (with
// the CRD validation's checks, static cost included) and evaluates it.
func runCELLibCases(t *testing.T, cases []celLibCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			v, errs := newCELValidator(typedSchema(apiextensionsv1.ValidationRule{Rule: tc.rule, Message: "m"}), nil)
			if len(errs) > 0 {
				t.Fatalf("compile: %v", errs)
			}
			spec := tc.spec
			if spec == nil {
				spec = map[string]any{}
			}
			var got []string
			for _, e := range v.validate(map[string]any{"spec": spec}, nil) {
				got = append(got, e.Error())
			}
			var want []string
			switch tc.want {
			case "":
			case "false":
				want = []string{`spec: Invalid value: "object": m`}
			default:
				want = []string{`spec: Invalid value: "object": ` + tc.want + ` evaluating rule: m`}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// celCompileErrors compiles rule on typedSchema's spec and returns the
// CRD validation's errors.
func celCompileErrors(rule string) []string {
	c := validCRD()
	c.Spec.Versions[0].Schema.OpenAPIV3Schema = typedSchema(apiextensionsv1.ValidationRule{Rule: rule})
	var out []string
	for _, e := range validateCRD(c) {
		out = append(out, e.Error())
	}
	return out
}

func TestCELQuantityLibrary(t *testing.T) {
	runCELLibCases(t, []celLibCase{
		{rule: "quantity('1.5G') == quantity('1500M')"},
		{rule: "quantity('1Gi') != quantity('1G')"},
		{rule: "isQuantity('200k') && isQuantity('1.3Gi') && !isQuantity('200K') && !isQuantity('Three') && !isQuantity('1,3G')"},
		{rule: "quantity('50k').isInteger() && quantity('50000000G').isInteger() && !quantity('9999999999999999999999999999999999999G').isInteger()"},
		{rule: "quantity('50k').asInteger() == 50000"},
		{rule: "quantity('50k').sub(20000).asApproximateFloat() == 30000.0"},
		{rule: "quantity('100m').asApproximateFloat() == 0.1"},
		{rule: "quantity('50k').add(quantity('20k')) == quantity('70k') && quantity('50k').add(20) == quantity('50020')"},
		{rule: "quantity('50k').sub(quantity('20k')) == quantity('30k') && quantity('50k').sub(20000) == quantity('30k')"},
		{rule: "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')"},
		{rule: "quantity('50k').mul(3) == quantity('150k')"},
		{rule: "quantity('-1').sign() == -1 && quantity('0').sign() == 0 && quantity('5Mi').sign() == 1 && sign(quantity('-2')) == -1"},
		{rule: "quantity('200M').compareTo(quantity('0.2G')) == 0 && quantity('50M').compareTo(quantity('50Mi')) == -1 && quantity('50Mi').compareTo(quantity('50M')) == 1"},
		{rule: "quantity('150Mi').isGreaterThan(quantity('100Mi')) && !quantity('50Mi').isGreaterThan(quantity('100Mi'))"},
		{rule: "quantity('50M').isLessThan(quantity('100M')) && !quantity('100M').isLessThan(quantity('50M'))"},
		{rule: "type(quantity('1')) == type(quantity('2'))"},
		{rule: "quantity(self.name).isLessThan(quantity('1Gi'))", spec: map[string]any{"name": "2Gi"}, want: "false"},
		{rule: "quantity(self.name).isLessThan(quantity('1Gi'))", spec: map[string]any{"name": "512Mi"}},
		{rule: "quantity(self.name).sign() >= 0", spec: map[string]any{"name": "x"}, want: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
		{rule: "quantity('9999999999999999999999999999999999999G').asInteger() > 0", want: "cannot convert value to integer"},
	})
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
	const spec = "spec.versions[0].schema.openAPIV3Schema.properties[spec]."
	cases := []struct {
		rule string
		want []string
	}{
		{rule: "quantity(self.name) == quantity('1') && isQuantity(self.name) && quantity(self.name).add(1).isLessThan(quantity('2'))"},
		{rule: "ip(self.name) == ip('1.2.3.4') && isIP(self.name) && ip.isCanonical(self.name) && cidr(self.name).containsIP(self.name) && cidr(self.name).containsCIDR(self.name)"},
		{rule: "url(self.name) == url('http://a') && isURL(self.name) && url(self.name).getQuery().size() > 0"},
		{rule: "semver(self.name) == semver('1.0.0') && isSemver(self.name, true)"},
		{rule: "self.tags.all(t, quantity(t).isLessThan(quantity('1')) && isCIDR(t) && !format.uri().validate(t).hasValue())"},
		{rule: "!format.dns1123Label().validate(self.name).hasValue()"},
		{rule: "!format.uri().validate(self.name).hasValue()", want: []string{
			spec + "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 7.9x" + costHint}},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			if got := celCompileErrors(tc.rule); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCELLibraryRuntimeCost checks that the libraries' calls are charged
// at run time: validating a long string against the uri format exceeds
// the per-call limit (its static estimate is within the limits).
func TestCELLibraryRuntimeCost(t *testing.T) {
	s := typedSchema(apiextensionsv1.ValidationRule{Rule: "!format.uri().validate(self.name).hasValue()", Message: "m"})
	spec := s.Properties["spec"]
	name := spec.Properties["name"]
	name.MaxLength = int64Ptr(90000)
	spec.Properties["name"] = name
	s.Properties["spec"] = spec
	v, errs := newCELValidator(s, nil)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	cases := []struct {
		name string
		want string // in the single error; "": none
	}{
		{name: "http://example.com/" + strings.Repeat("a", 100)},
		{name: "http://example.com/" + strings.Repeat("a", 50000), want: "operation cancelled: actual cost limit exceeded"},
	}
	for _, tc := range cases {
		got := v.validate(map[string]any{"spec": map[string]any{"name": tc.name}}, nil)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("name of %d bytes: got %v, want no errors", len(tc.name), got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Error(), tc.want)):
			t.Errorf("name of %d bytes: got %v, want one error containing %q", len(tc.name), got, tc.want)
		}
	}
}

// TestCELLibrariesEndToEnd installs through the real server a CRD whose
// rules use each library, and checks that a valid widget is created and
// one violating a rule is rejected with that rule's message.
func TestCELLibrariesEndToEnd(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := newCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	short := apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: int64Ptr(256)}
	for _, p := range []string{"memory", "address", "network", "endpoint", "label", "version"} {
		spec.Properties[p] = short
	}
	spec.XValidations = apiextensionsv1.ValidationRules{
		{Rule: "!has(self.memory) || quantity(self.memory).compareTo(quantity('1Gi')) <= 0", Message: "memory must be at most 1Gi"},
		{Rule: "!has(self.address) || !has(self.network) || cidr(self.network).containsIP(self.address)", Message: "address must be in network"},
		{Rule: "!has(self.endpoint) || url(self.endpoint).getScheme() == 'https'", Message: "endpoint must use https"},
		{Rule: "!has(self.label) || !format.dns1123Label().validate(self.label).hasValue()", MessageExpression: "'bad label: ' + format.dns1123Label().validate(self.label).value().join(', ')"},
		{Rule: "!has(self.version) || (isSemver(self.version, true) && semver(self.version, true).isGreaterThan(semver('1.27.0')))", Message: "version must be above 1.27.0"},
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name, 5*time.Second)
	ri := ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns1")

	valid := func() map[string]any {
		return map[string]any{"name": "a", "memory": "512Mi", "address": "10.0.0.1", "network": "10.0.0.0/8",
			"endpoint": "https://example.com/x", "label": "ok", "version": "v1.28"}
	}
	if _, err := ri.Create(ctx, widget("example.com/v1", "Widget", "ok", valid()), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create valid widget: %v", err)
	}
	cases := []struct {
		field, value, want string
	}{
		{"memory", "2Gi", `spec: Invalid value: "object": memory must be at most 1Gi`},
		{"memory", "lots", `spec: Invalid value: "object": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: memory must be at most 1Gi`},
		{"address", "11.0.0.1", `spec: Invalid value: "object": address must be in network`},
		{"endpoint", "http://example.com", `spec: Invalid value: "object": endpoint must use https`},
		{"label", "Bad_Label", `spec: Invalid value: "object": bad label: a lowercase RFC 1123 label must consist of`},
		{"version", "1.27.0", `spec: Invalid value: "object": version must be above 1.27.0`},
	}
	for i, tc := range cases {
		s := valid()
		s[tc.field] = tc.value
		_, err := ri.Create(ctx, widget("example.com/v1", "Widget", fmt.Sprintf("bad%d", i), s), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create with %s=%q: got %v, want 422 containing %q", tc.field, tc.value, err, tc.want)
		}
	}
}
