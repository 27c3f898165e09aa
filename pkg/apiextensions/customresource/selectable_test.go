package customresource

import (
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func TestValidateSelectableFields(t *testing.T) {
	p := "spec.versions[0].selectableFields"
	for _, tc := range []struct {
		name   string
		fields []string
		noSch  bool
		want   []string
	}{
		{name: "valid", fields: []string{".spec.color", ".spec.size", ".spec.name"}},
		{name: "empty", fields: []string{""}, want: []string{p + "[0].jsonPath: Required value"}},
		{name: "unknown field", fields: []string{".spec.nope"}, want: []string{p + `[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field`}},
		{name: "object", fields: []string{".spec"}, want: []string{p + `[0].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`}},
		{name: "metadata", fields: []string{".metadata.name"}, want: []string{p + `[0].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata`}},
		{name: "duplicate", fields: []string{".spec.color", ".spec.color"}, want: []string{p + `[1].jsonPath: Duplicate value: ".spec.color"`}},
		{name: "too many", fields: []string{".spec.f0", ".spec.f1", ".spec.f2", ".spec.f3", ".spec.f4", ".spec.f5", ".spec.f6", ".spec.f7", ".spec.f8"},
			want: []string{p + ": Too many: 9: must have at most 8 items"}},
		{name: "no schema", fields: []string{".spec.color"}, noSch: true, want: []string{"selectableFields may only be set when version.schema.openAPIV3Schema is not included"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crdtest.ValidCRD()
			v := &c.Spec.Versions[0]
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			for i := 0; i < 9; i++ {
				spec.Properties[fmt.Sprintf("f%d", i)] = apiextensionsv1.JSONSchemaProps{Type: "string"}
			}
			v.Schema.OpenAPIV3Schema.Properties["spec"] = spec
			v.Schema.OpenAPIV3Schema.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}},
			}
			for _, f := range tc.fields {
				v.SelectableFields = append(v.SelectableFields, apiextensionsv1.SelectableField{JSONPath: f})
			}
			if tc.noSch {
				v.Schema = nil
			}
			got := ValidateSelectableFields(v, field.NewPath("spec").Child("versions").Index(0).Child("selectableFields")).ToAggregate()
			if len(tc.want) == 0 {
				if got != nil {
					t.Fatalf("got %v, want valid", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("got valid, want %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Fatalf("got %v, want it to contain %q", got, w)
				}
			}
		})
	}
}
