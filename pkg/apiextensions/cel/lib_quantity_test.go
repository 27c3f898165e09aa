package cel

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// libCase is a rule on typedSchema's spec evaluated with spec: want
// is "" when the rule holds, "false" when it does not, else the
// evaluation error (the text before " evaluating rule").
type libCase struct {
	rule string
	spec map[string]any
	want string
}

// runCELLibCases compiles each rule through kapi's environment (with
// the CRD validation's checks, static cost included) and evaluates it.
func runCELLibCases(t *testing.T, cases []libCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			v, errs := NewValidator(crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: tc.rule, Message: "m"}), nil)
			if len(errs) > 0 {
				t.Fatalf("compile: %v", errs)
			}
			spec := tc.spec
			if spec == nil {
				spec = map[string]any{}
			}
			var got []string
			for _, e := range v.Validate(map[string]any{"spec": spec}, nil) {
				got = append(got, e.Error())
			}
			var want []string
			switch tc.want {
			case "":
			case "false":
				want = []string{`spec: Invalid value: m`}
			default:
				want = []string{`spec: Invalid value: "object": ` + tc.want + ` evaluating rule: m`}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestCELQuantityLibrary(t *testing.T) {
	runCELLibCases(t, []libCase{
		{rule: "quantity('1.5G') == quantity('1500M')"},
		{rule: "!(quantity('1Gi') == quantity('1G'))"},
		{rule: "isQuantity('200k') && isQuantity('1.3Gi') && !isQuantity('200K') && !isQuantity('Three') && !isQuantity('1,3G')"},
		{rule: "quantity('50k').isInteger() && quantity('50000000G').isInteger() && !quantity('9999999999999999999999999999999999999G').isInteger()"},
		{rule: "quantity('50k').asInteger() == 50000"},
		{rule: "quantity('50k').sub(20000).asApproximateFloat() == 30000.0"},
		{rule: "quantity('100m').asApproximateFloat() == 0.1"},
		{rule: "quantity('50k').add(quantity('20k')) == quantity('70k') && quantity('50k').add(20) == quantity('50020')"},
		{rule: "quantity('50k').sub(quantity('20k')) == quantity('30k') && quantity('50k').sub(20000) == quantity('30k')"},
		{rule: "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')"},
		{rule: "sign(quantity('-1')) == -1 && sign(quantity('0')) == 0 && sign(quantity('5Mi')) == 1"},
		{rule: "quantity('200M').compareTo(quantity('0.2G')) == 0 && quantity('50M').compareTo(quantity('50Mi')) == -1 && quantity('50Mi').compareTo(quantity('50M')) == 1"},
		{rule: "quantity('150Mi').isGreaterThan(quantity('100Mi')) && !quantity('50Mi').isGreaterThan(quantity('100Mi'))"},
		{rule: "quantity('50M').isLessThan(quantity('100M')) && !quantity('100M').isLessThan(quantity('50M'))"},
		{rule: "quantity(self.name).isLessThan(quantity('1Gi'))", spec: map[string]any{"name": "2Gi"}, want: "false"},
		{rule: "quantity(self.name).isLessThan(quantity('1Gi'))", spec: map[string]any{"name": "512Mi"}},
		{rule: "sign(quantity(self.name)) >= 0", spec: map[string]any{"name": "x"}, want: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
		{rule: "quantity('9999999999999999999999999999999999999G').asInteger() > 0", want: "cannot convert value to integer"},
	})
}

// TestCELLibraryRuntimeCost checks that the libraries' calls are charged
// at run time: validating a long string against the uri format exceeds
// the per-call limit (its static estimate is within the limits).
func TestCELLibraryRuntimeCost(t *testing.T) {
	s := crdtest.TypedSchema(apiextensionsv1.ValidationRule{Rule: "!format.uri().validate(self.name).hasValue()", Message: "m"})
	spec := s.Properties["spec"]
	name := spec.Properties["name"]
	name.MaxLength = int64Ptr(90000)
	spec.Properties["name"] = name
	s.Properties["spec"] = spec
	v, errs := NewValidator(s, nil)
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
		got := v.Validate(map[string]any{"spec": map[string]any{"name": tc.name}}, nil)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("name of %d bytes: got %v, want no errors", len(tc.name), got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Error(), tc.want)):
			t.Errorf("name of %d bytes: got %v, want one error containing %q", len(tc.name), got, tc.want)
		}
	}
}
