package schema

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestListMapItemsArrayValue: items given as an array under
// x-kubernetes-list-type map. The message is kube-apiserver v1.37.2's
// answer to such a CRD, verbatim: the internal JSONSchemaPropsOrArray.
func TestListMapItemsArrayValue(t *testing.T) {
	s := &apiextensionsv1.JSONSchemaProps{
		Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"k"},
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextensionsv1.JSONSchemaProps{{Type: "object"}}},
	}
	errs := validateListMapSchema(s, field.NewPath("l"))
	if len(errs) != 1 {
		t.Fatalf("got %v", errs)
	}
	const want = `Invalid value: {"Schema":null,"JSONSchemas":[{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}]}: must only have a single schema if x-kubernetes-list-type is map`
	if got := errs[0].ErrorBody(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
