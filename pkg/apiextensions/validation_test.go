package apiextensions

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func TestValidateCRD(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*apiextensionsv1.CustomResourceDefinition)
		want   []string // each must appear in the aggregated errors; none: valid
	}{
		{name: "valid", modify: func(*apiextensionsv1.CustomResourceDefinition) {}},
		{name: "name not plural.group", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Name = "things.example.com" },
			want: []string{`metadata.name: Invalid value: "things.example.com": must be spec.names.plural+"."+spec.group`}},
		{name: "group without dot", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Group = "example"
			c.Name = "widgets.example"
		},
			want: []string{`spec.group: Invalid value: "example": should be a domain with at least one dot`}},
		{name: "bad scope", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Galaxy" },
			want: []string{`spec.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"`}},
		{name: "two storage versions", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0]
			v.Name = "v2"
			c.Spec.Versions = append(c.Spec.Versions, v)
		}, want: []string{"spec.versions: Invalid value", "must have exactly one version marked as storage version"}},
		// kube-apiserver v1.37.2: no versions is the same Invalid error.
		{name: "no versions", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions = nil },
			want: []string{"spec.versions: Invalid value: null: must have exactly one version marked as storage version"}},
		{name: "duplicate versions", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0]
			v.Storage = false
			c.Spec.Versions = append(c.Spec.Versions, v)
		}, want: []string{"must contain unique version names"}},
		// kube-apiserver v1.37.2 answered two versions v1 (both storage, one
		// schema) with the internal versions, the shared schema moved up:
		{name: "versions in internal form", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions = append(c.Spec.Versions, c.Spec.Versions[0])
			c.Spec.Versions[0].Name, c.Spec.Versions[1].Name = "v1", "v1"
		}, want: []string{`spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null},{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must contain unique version names`}},
		{name: "bad version name", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Name = "V1" },
			want: []string{`spec.versions[0].name: Invalid value: "V1"`}},
		{name: "no schema", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Schema = nil },
			want: []string{"spec.versions[0].schema.openAPIV3Schema: Required value"}}, // (per version, even for one: upstream's v1-only check)
		{name: "root not object", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{Type: "string"}
		}, want: []string{`spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root`}},
		{name: "root without type", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{}
		}, want: []string{"spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"}},
		{name: "metadata beyond name", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"labels": {Type: "object"}},
			}
		}, want: []string{"must not specify anything other than name and generateName"}},
		{name: "missing kind", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Kind = ""; c.Spec.Names.ListKind = "" },
			want: []string{"spec.names.kind: Required value", "spec.names.listKind: Required value"}},
		{name: "kind equals listKind", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ListKind = "Widget" },
			want: []string{"kind and listKind may not be the same"}},
		{name: "bad short name", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = []string{"Bad_Name"} },
			want: []string{`spec.names.shortNames[0]: Invalid value: "Bad_Name"`}},
		{name: "bad printer column", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "x", Type: "blob", JSONPath: "spec"}}
		}, want: []string{"additionalPrinterColumns[0].type: Invalid value", "must be a simple json path starting with ."}},
		{name: "scale outside spec", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources.Scale = &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".status.r", StatusReplicasPath: ".status.r"}
		}, want: []string{"scale.specReplicasPath: Invalid value", "should be a json path under .spec"}},
		{name: "status root field", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.AnyOf = []apiextensionsv1.JSONSchemaProps{{Required: []string{"spec"}}}
		}, want: []string{"fields are allowed at the root of the schema if the status subresource is enabled"}},
		{name: "webhook without config", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
		}, want: []string{"spec.conversion.webhook: Required value"}},
		{name: "stored version dropped", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Status.StoredVersions = []string{"v1", "v0"} },
			want: []string{"status.storedVersions[1]: Invalid value: \"v0\": missing from spec.versions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := crdtest.ValidCRD()
			tc.modify(c)
			errs := validateCRD(c, nil)
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("got %v, want valid", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("got valid, want %v", tc.want)
			}
			got := errs.ToAggregate().Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

func TestValidateCRDUpdate(t *testing.T) {
	old := crdtest.ValidCRD()
	setCondition(old, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue})
	cases := []struct {
		name   string
		modify func(*apiextensionsv1.CustomResourceDefinition)
		want   string
	}{
		{name: "scope of an established CRD", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped },
			want: "spec.scope: Invalid value: \"Cluster\": field is immutable"},
		{name: "kind of an established CRD", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Names.Kind, c.Spec.Names.ListKind = "Gadget", "GadgetList"
		}, want: "spec.names.kind: Invalid value: \"Gadget\": field is immutable"},
		{name: "plural", modify: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Names.Plural = "gadgets"
			c.Name = "gadgets.example.com"
		},
			want: "spec.names.plural: Invalid value: \"gadgets\": field is immutable"},
		{name: "short names may change", modify: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = []string{"wd"} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := old.DeepCopy()
			tc.modify(c)
			errs := validateCRDUpdate(c, old, nil)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("got %v, want valid", errs.ToAggregate())
				}
				return
			}
			if got := errs.ToAggregate(); got == nil || !strings.Contains(got.Error(), tc.want) {
				t.Errorf("got %v, want it to contain %q", got, tc.want)
			}
		})
	}
}

// TestCreateInvalidCRD checks the API answer: 422 with the CRD's kind.
func TestCreateInvalidCRD(t *testing.T) {
	ts := startServer(t, serverOptions{})
	c := crdtest.ValidCRD()
	c.Spec.Group = "example"
	_, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), c, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid`) {
		t.Errorf("got %v, want 422 CustomResourceDefinition invalid", err)
	}
}
