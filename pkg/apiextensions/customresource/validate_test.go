package customresource

import (
	"context"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/ptr"
)

// widgetVersion is the one version of CRD "widgets.w.example.com"
// the cases below were created against on kube-apiserver v1.37.2
// (hack/build-reference.sh) and on kapi: a CEL rule on spec, a default, an
// int-or-string, a list-type set, a nullable enum, an embedded resource,
// a bounded string, and the scale subresource.
func widgetVersion() (*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionVersion) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "w.example.com", Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Subresources: &apiextensionsv1.CustomResourceSubresources{
				Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
				Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
			},
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {
						Type:         "object",
						XValidations: apiextensionsv1.ValidationRules{{Rule: "self.replicas <= 10", Message: "too many"}},
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"replicas": {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("1")}, Minimum: ptr.To(0.0)},
							"port":     {XIntOrString: true},
							"tags":     {Type: "array", XListType: ptr.To("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
							"mode":     {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}, {Raw: []byte(`"b"`)}}, Nullable: true},
							"tmpl":     {Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)},
							"name":     {Type: "string", MaxLength: ptr.To[int64](3), Pattern: "^[a-z]+$"},
						},
					},
					"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
				},
			}},
		}},
	}}
	return crd, &crd.Spec.Versions[0]
}

// TestValidateAsUpstream: the error lists kube-apiserver v1.37.2 answered
// for these widgets (kubectl create, its "The Widget ... is invalid"
// list, in its order), after pruning and defaulting as a create does.
func TestValidateAsUpstream(t *testing.T) {
	crd, v := widgetVersion()
	s, err := NewStrategy(crd, v, schema.GroupVersionKind{Group: "w.example.com", Version: "v1", Kind: "Widget"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const notChecked = "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"valid", `{"replicas":2,"tags":["a","b"],"tmpl":{"apiVersion":"v1","kind":"Pod"}}`, nil},
		// (Upstream orders the schema's own errors by map iteration: one
		// per case here.)
		{"schema errors block the rules", `{"replicas":11,"tags":["a","a"],"name":"ABCD","tmpl":{"kind":"Pod"}}`, []string{
			`spec.name: Too long: may not be more than 3 bytes`,
			`spec.tmpl.apiVersion: Required value`,
			`spec.tags[1]: Duplicate value: "a"`,
			notChecked,
		}},
		{"a set's duplicate", `{"tags":["a","a"]}`, []string{`spec.tags[1]: Duplicate value: "a"`}},
		{"an embedded resource without apiVersion", `{"tmpl":{"kind":"Pod"}}`, []string{`spec.tmpl.apiVersion: Required value`, notChecked}},
		{"a failed rule shows no value for an object", `{"replicas":11}`, []string{`spec: Invalid value: too many`}},
		{"an unsupported value blocks the rules", `{"replicas":11,"mode":"c"}`, []string{`spec.mode: Unsupported value: "c": supported values: "a", "b"`, notChecked}},
		{"embedded resource fields, second duplicates only", `{"tmpl":{"apiVersion":"a/b/c","kind":"9x","metadata":{"name":"a/b"}},"tags":["x",true,"x","x",true]}`, []string{
			`spec.tags[1]: Invalid value: "boolean": spec.tags[1] in body must be of type string: "boolean"`,
			`spec.tags[4]: Invalid value: "boolean": spec.tags[4] in body must be of type string: "boolean"`,
			`spec.tmpl.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
			`spec.tmpl.kind: Invalid value: "9x": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
			`spec.tmpl.metadata.name: Invalid value: "a/b": may not contain '/'`,
			`spec.tags[2]: Duplicate value: "x"`,
			`spec.tags[4]: Duplicate value: true`,
			notChecked,
		}},
		{"scale replicas not an integer", `{"replicas":"x"}`, []string{
			`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
			`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64`,
			notChecked,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "w.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}}}
			var spec map[string]any
			if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			u.Object["spec"] = spec
			s.PrepareForCreate(context.Background(), u)
			var got []string
			for _, e := range s.Validate(context.Background(), u) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestValidateStatusAsUpstream: a /status write is validated on its
// status alone, its messages relative to it (kube-apiserver v1.37.2
// answered this merge patch of status.replicas to "x" on the CRD above
// with exactly these errors).
func TestValidateStatusAsUpstream(t *testing.T) {
	crd, v := widgetVersion()
	s, err := NewStrategy(crd, v, schema.GroupVersionKind{Group: "w.example.com", Version: "v1", Kind: "Widget"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(status any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "w.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default"},
			// A spec the schema refuses does not fail a status write.
			"spec": map[string]any{"replicas": int64(1), "name": "TOOLONG"},
		}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	old := obj(map[string]any{"replicas": int64(1)})
	var got []string
	for _, e := range s.validateStatusWithRules(obj(map[string]any{"replicas": "x"}), old) {
		got = append(got, e.Error())
	}
	want := []string{
		`status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"`,
		`.status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64`,
		"<nil>: Invalid value: null: " + rulesNotChecked,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if errs := s.validateStatusWithRules(obj(map[string]any{"replicas": int64(2)}), old); len(errs) != 0 {
		t.Errorf("valid status: got %v, want none", errs)
	}
}

// TestMissingNameBlocksRules: a custom resource without a name or
// generateName does not get its CEL rules run (the store reports the
// Required name itself), as kube-apiserver v1.37.2 answered a create of one
// whose rule would have failed: "metadata.name: Required value: name or
// generateName is required" then "<nil>: Invalid value: null: some
// validation rules were not checked ...". An invalid name (not Required)
// does not block them.
func TestMissingNameBlocksRules(t *testing.T) {
	crd, v := widgetVersion()
	s, err := NewStrategy(crd, v, schema.GroupVersionKind{Group: "w.example.com", Version: "v1", Kind: "Widget"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want string
	}{
		{"", "<nil>: Invalid value: null: " + rulesNotChecked},
		{"Bad_Name", "spec: Invalid value: too many"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "w.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "default"}, "spec": map[string]any{"replicas": int64(11)}}}
		if tc.name != "" {
			u.SetName(tc.name)
		}
		s.PrepareForCreate(context.Background(), u)
		var got []string
		for _, e := range s.Validate(context.Background(), u) {
			got = append(got, e.Error())
		}
		if !slices.Equal(got, []string{tc.want}) {
			t.Errorf("name %q: got %q, want [%q]", tc.name, got, tc.want)
		}
	}
}
