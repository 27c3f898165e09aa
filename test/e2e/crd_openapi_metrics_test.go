package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestCRDOpenAPIRegenerationMetrics: apiextensions_openapi_v2_regeneration_count
// and apiextensions_openapi_v3_regeneration_count have the series
// kube-apiserver v1.37.2 has after each step of a CRD's life (read from
// the reference binary with the same requests): none before a CRD; "add"
// (v2 per CRD, v3 per served version) once it is established; a v2
// "update" on any change (a label); a v3 "update" of the one version
// whose schema changed; "remove" for the CRD and each of its
// group-versions once it is deleted. Every series is 0 (upstream makes
// them without incrementing). HELP and TYPE as the reference's.
func TestCRDOpenAPIRegenerationMetrics(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	cs := apiextensionsclient.NewForConfigOrDie(srv.Config)
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	const name = "widgets.m24c.example.com"
	v2 := func(reason string) string {
		return fmt.Sprintf(`apiextensions_openapi_v2_regeneration_count{crd=%q,reason=%q} 0`, name, reason)
	}
	v3 := func(reason, version string) string {
		return fmt.Sprintf(`apiextensions_openapi_v3_regeneration_count{crd=%q,group="m24c.example.com",reason=%q,version=%q} 0`, name, reason, version)
	}
	const (
		help2 = "# HELP apiextensions_openapi_v2_regeneration_count [ALPHA] Counter of OpenAPI v2 spec regeneration count broken down by causing CRD name and reason."
		type2 = "# TYPE apiextensions_openapi_v2_regeneration_count counter"
		help3 = "# HELP apiextensions_openapi_v3_regeneration_count [ALPHA] Counter of OpenAPI v3 spec regeneration count broken down by group, version, causing CRD and reason."
		type3 = "# TYPE apiextensions_openapi_v3_regeneration_count counter"
	)
	// expect waits for the two families to be exactly want (in the
	// exposition's order).
	expect := func(step string, want []string) {
		t.Helper()
		var got []string
		deadline := time.Now().Add(30 * time.Second)
		for {
			text := metricsText(t, srv.Config)
			got = append(familyLines(text, "apiextensions_openapi_v2_regeneration_count"),
				familyLines(text, "apiextensions_openapi_v3_regeneration_count")...)
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: got\n%q\nwant\n%q", step, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	expect("before any CRD", nil)

	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptrTo(true),
	}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "m24c.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Schema: schema},
			},
		},
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("created", []string{help2, type2, v2("add"), help3, type3, v3("add", "v1"), v3("add", "v2")})

	if _, err := crds.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("labelled", []string{help2, type2, v2("add"), v2("update"), help3, type3, v3("add", "v1"), v3("add", "v2")})

	if _, err := crds.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/description","value":"d"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("v1's schema changed", []string{help2, type2, v2("add"), v2("update"), help3, type3, v3("add", "v1"), v3("add", "v2"), v3("update", "v1")})

	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("deleted", []string{help2, type2, v2("add"), v2("remove"), v2("update"), help3, type3,
		v3("add", "v1"), v3("add", "v2"), v3("remove", "v1"), v3("remove", "v2"), v3("update", "v1")})
}
