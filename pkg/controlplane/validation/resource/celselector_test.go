package resource

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Expected errors: upstream's validateCELSelector and
// convertCELErrorToValidationError (pkg/apis/resource/validation/
// validation.go) with the DRA compiler (k8s.io/dynamic-resource-allocation/
// cel/compile.go), and the "CEL-compile-errors" and "CEL-cost" cases of
// validation_resourceclaim_test.go, kubernetes v1.37. The cost case's
// expression comes from upstream's test (itself from
// test/integration/apiserver/cel/validatingadmissionpolicy_test.go).
const tooExpensive = `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))`

var celSelectorCases = []struct {
	name, expression string
	want             *field.Error // at path "<selector>.cel.expression"; nil: valid
}{
	{"driver", `device.driver == "dra.example.com"`, nil},
	{"attribute", `device.attributes["dra.example.com"].model == "a100"`, nil},
	{"string function on an attribute", `device.attributes["dra.example.com"].model.startsWith("a")`, nil},
	{"capacity quantity", `device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) >= 0`, nil},
	{"semver attribute", `device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))`, nil},
	{"cel.bind", `cel.bind(dra, device.attributes["dra.example.com"], dra.a && dra.b)`, nil},
	{"allowMultipleAllocations", `device.allowMultipleAllocations`, nil},
	{"comprehension over attributes", `device.attributes.all(d, device.attributes[d].all(a, device.attributes[d][a] == "x"))`, nil},
	{"the any type", `device.attributes["dra.example.com"].healthy`, nil},
	{"wrong key type", `device.attributes[true].someBoolean`,
		field.Invalid(nil, `device.attributes[true].someBoolean`, "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to '(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n | .................^")},
	{"unknown field", `device.name == "gpu-0"`,
		field.Invalid(nil, `device.name == "gpu-0"`, "compilation failed: ERROR: <input>:1:7: undefined field 'name'\n | device.name == \"gpu-0\"\n | ......^")},
	{"undeclared variable", `self.driver == "x"`,
		field.Invalid(nil, `self.driver == "x"`, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'self' (in container '')\n | self.driver == \"x\"\n | ^")},
	{"syntax error", `device.driver ==`,
		field.Invalid(nil, `device.driver ==`, "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | device.driver ==\n | ................^")},
	{"not a bool", `device.driver`,
		field.Invalid(nil, `device.driver`, "must evaluate to bool or the unknown type, not string")},
	{"dyn is not the unknown type", `dyn(true)`,
		field.Invalid(nil, `dyn(true)`, "must evaluate to bool or the unknown type, not dyn")},
	{"too expensive", tooExpensive, field.Forbidden(nil, "too complex, exceeds cost limit")},
	{"too long", `device.driver == "` + strings.Repeat("x", resourcev1.CELSelectorExpressionMaxLength) + `"`,
		field.TooLong(nil, "", resourcev1.CELSelectorExpressionMaxLength)},
}

// want renders tc's expected error at p.
func wantAt(e *field.Error, p *field.Path) string {
	if e == nil {
		return ""
	}
	out := *e
	out.Field = p.String()
	return out.Error()
}

func selectors(expr string) []resourcev1.DeviceSelector {
	return []resourcev1.DeviceSelector{
		{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "dra.example.com"`}},
		{CEL: &resourcev1.CELDeviceSelector{Expression: expr}},
	}
}

func TestCELSelectors(t *testing.T) {
	for _, tc := range celSelectorCases {
		t.Run(tc.name, func(t *testing.T) {
			// DeviceClass spec.selectors.
			class := &resourcev1.DeviceClass{Spec: resourcev1.DeviceClassSpec{Selectors: selectors(tc.expression)}}
			if got, want := render(ValidateDeviceClass(class)), wantAt(tc.want, field.NewPath("spec", "selectors").Index(1).Child("cel", "expression")); got != want {
				t.Errorf("deviceclass: got\n%s\nwant\n%s", got, want)
			}
			// ResourceClaim exactly.selectors and firstAvailable[].selectors.
			req := exact("gpu", "gpu.example.com")
			req.Exactly.Selectors = selectors(tc.expression)
			sub := resourcev1.DeviceRequest{Name: "nic", FirstAvailable: []resourcev1.DeviceSubRequest{{
				Name: "any", DeviceClassName: "nic.example.com", AllocationMode: "ExactCount", Count: 1, Selectors: selectors(tc.expression),
			}}}
			claim := &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{req, sub}}}}
			reqs := field.NewPath("spec", "devices", "requests")
			want := wantAt(tc.want, reqs.Index(0).Child("exactly", "selectors").Index(1).Child("cel", "expression"))
			if w2 := wantAt(tc.want, reqs.Index(1).Child("firstAvailable").Index(0).Child("selectors").Index(1).Child("cel", "expression")); w2 != "" {
				want += "\n" + w2
			}
			if got := render(ValidateResourceClaim(claim)); got != want {
				t.Errorf("resourceclaim: got\n%s\nwant\n%s", got, want)
			}
			// ResourceClaimTemplate spec.spec.devices.
			tmpl := &resourcev1.ResourceClaimTemplate{Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claim.Spec}}
			got := render(ValidateResourceClaimTemplate(tmpl))
			if tc.want == nil && got != "" || tc.want != nil && !strings.Contains(got, "spec.spec.devices.requests[0].exactly.selectors[1].cel.expression: ") {
				t.Errorf("resourceclaimtemplate: got\n%s", got)
			}
		})
	}
}

func BenchmarkCompileDeviceSelector(b *testing.B) {
	for b.Loop() {
		if _, detail, err := CompileDeviceSelector(`device.attributes["dra.example.com"].model == "a100" && device.capacity["dra.example.com"].memory.compareTo(quantity("40Gi")) >= 0`); err != nil || detail != "" {
			b.Fatal(detail, err)
		}
	}
}
