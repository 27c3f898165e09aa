package e2e

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/kapitest"
)

// celFamilies are the CEL and ratcheting families of
// testdata/metrics/cel_validation.txt.
var celFamilies = []string{
	"apiextensions_apiserver_validation_ratcheting_seconds",
	"apiserver_cel_compilation_duration_seconds",
	"apiserver_cel_evaluation_duration_seconds",
}

// TestCELValidationMetrics: apiserver_cel_compilation_duration_seconds,
// apiserver_cel_evaluation_duration_seconds and
// apiextensions_apiserver_validation_ratcheting_seconds are, at start,
// the reference's lines (testdata/metrics/cel_validation.txt, kube-apiserver
// v1.37.2's /metrics: HELP, TYPE, buckets, all 0), and count what the
// reference counted for the same requests (session 25, read from the
// reference binary step by step): a CRD whose schema has 8 nodes, two of
// them with rules: 2 compilations when it is created (its rules' nodes)
// and 8 more once its resources are served (every node; upstream at the
// first request, kapi when it serves the version, so the test looks after
// a list); 3 evaluations per validation of an object (root, spec,
// spec.replicas); one ratcheting observation per update, status updates
// and no-op patches included, none on create; 2 compilations for a label
// on the CRD.
func TestCELValidationMetrics(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	want, err := os.ReadFile("testdata/metrics/cel_validation.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	text := metricsText(t, srv.Config)
	for _, l := range strings.Split(text, "\n") {
		for _, f := range celFamilies {
			if strings.HasPrefix(l, f+"_") || strings.HasPrefix(l, "# HELP "+f+" ") || strings.HasPrefix(l, "# TYPE "+f+" ") {
				got = append(got, l)
			}
		}
	}
	if w := strings.Split(strings.TrimSpace(string(want)), "\n"); !slices.Equal(got, w) {
		t.Fatalf("at start: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}

	counts := func() [3]int {
		t.Helper()
		var c [3]int
		text := metricsText(t, srv.Config)
		for i, f := range celFamilies {
			for _, l := range strings.Split(text, "\n") {
				if v, ok := strings.CutPrefix(l, f+"_count "); ok {
					n, err := strconv.Atoi(v)
					if err != nil {
						t.Fatalf("%s: %v", l, err)
					}
					c[i] = n
				}
			}
		}
		return c
	}
	// expect waits for the counts (ratcheting, compilation, evaluation).
	expect := func(step string, ratchet, compile, eval int) {
		t.Helper()
		want := [3]int{ratchet, compile, eval}
		deadline := time.Now().Add(20 * time.Second)
		for {
			c := counts()
			if c == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: got (ratcheting, compilation, evaluation) %v, want %v", step, c, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	crds := apiextensionsclient.NewForConfigOrDie(srv.Config).ApiextensionsV1().CustomResourceDefinitions()
	rule := func(r string) []apiextensionsv1.ValidationRule { return []apiextensionsv1.ValidationRule{{Rule: r}} }
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.cel25.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cel25.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {
							Type:         "object",
							XValidations: rule("self.replicas <= 10"),
							Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"replicas": {Type: "integer", XValidations: rule("self >= 0")},
								"name":     {Type: "string"},
								"tags":     {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
							},
						},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "boolean"}}},
					},
				}},
			}},
		},
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "cel25.example.com", Version: "v1", Resource: "widgets"}
	widgets := dynamic.NewForConfigOrDie(srv.Config).Resource(gvr).Namespace("default")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := widgets.List(ctx, metav1.ListOptions{}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect("CRD created and served", 0, 10, 0)

	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cel25.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"replicas": int64(3), "name": "a", "tags": []any{"x", "z"}},
	}}
	if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("created", 0, 10, 3)
	patch := func(body string, sub ...string) error {
		_, err := widgets.Patch(ctx, "w1", types.MergePatchType, []byte(body), metav1.PatchOptions{}, sub...)
		return err
	}
	if err := patch(`{"spec":{"replicas":4}}`); err != nil {
		t.Fatal(err)
	}
	expect("patched", 1, 10, 6)
	if err := patch(`{"spec":{"replicas":4}}`); err != nil {
		t.Fatal(err)
	}
	expect("patched without a change", 2, 10, 9)
	if err := patch(`{"status":{"ready":true}}`, "status"); err != nil {
		t.Fatal(err)
	}
	expect("status patched", 3, 10, 12)
	if err := patch(`{"spec":{"replicas":40}}`); err == nil {
		t.Fatal("replicas 40 accepted")
	}
	expect("refused by a rule", 4, 10, 15)
	if _, err := crds.Patch(ctx, crd.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("CRD labelled", 4, 12, 15)
}
