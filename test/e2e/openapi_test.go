package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/pkg/openapi/openapitest"
)

// createCRD creates crd on e's server and waits until it is Established;
// when the test ends it deletes it and waits until it is gone, so the
// next test (or -count run) may create it again.
func createCRD(t *testing.T, e *env, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	cs := apiextensionsclient.NewForConfigOrDie(e.config()).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := cs.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}
	t.Cleanup(func() {
		if err := cs.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD %s: %v", crd.Name, err)
			return
		}
		eventually(t, time.Minute, "CRD "+crd.Name+" gone", func() error {
			if _, err := cs.Get(context.Background(), crd.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
	})
	eventually(t, time.Minute, "CRD "+crd.Name+" established", func() error {
		got, err := cs.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", got.Status.Conditions)
	})
}

// widgetCRDWithScale is the custom resource openapitest's
// customresource.txt describes: namespaced, status and scale.
func widgetCRDWithScale() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.openapi.e2e.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "openapi.e2e.kapi.dev",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
			}},
		},
	}
}

// TestOpenAPIOperationsMatchUpstream compares the operations kapi
// publishes (path, method, operation ID, action, kind and parameter
// names) in /openapi/v2 and in the /openapi/v3 documents with upstream's,
// for ConfigMaps, Services (with status), Namespaces, Leases,
// CustomResourceDefinitions and a custom resource with status and scale
// (expected data and its sources: pkg/openapi/openapitest/testdata).
func TestOpenAPIOperationsMatchUpstream(t *testing.T) {
	srv, err := memoryBackend.start()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{backend: memoryBackend.name, srv: srv}
	createCRD(t, e, widgetCRDWithScale())

	get := func(path string) []byte {
		t.Helper()
		res := e.raw(t, "GET", path, nil, "Accept", "application/json")
		if res.code != 200 {
			t.Fatalf("GET %s: %d %.300s", path, res.code, res.body)
		}
		return res.body
	}
	for _, tc := range []struct {
		set, v3 string
	}{
		{"configmaps", "/openapi/v3/api/v1"},
		{"services", "/openapi/v3/api/v1"},
		{"namespaces", "/openapi/v3/api/v1"},
		{"leases", "/openapi/v3/apis/coordination.k8s.io/v1"},
		{"customresourcedefinitions", "/openapi/v3/apis/apiextensions.k8s.io/v1"},
		{"customresource", "/openapi/v3/apis/openapi.e2e.kapi.dev/v1"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			set, err := openapitest.Expected(tc.set)
			if err != nil {
				t.Fatal(err)
			}
			for _, doc := range []struct {
				path      string
				summarize func([]byte) ([]string, error)
			}{
				{"/openapi/v2", openapitest.SummarizeV2},
				{tc.v3, openapitest.SummarizeV3},
			} {
				// The custom resource's entries appear a moment after
				// Established.
				eventually(t, 30*time.Second, tc.set+" in "+doc.path, func() error {
					ops, err := doc.summarize(get(doc.path))
					if err != nil {
						return err
					}
					missing, extra := set.Diff(set.Select(ops))
					if len(missing) > 0 || len(extra) > 0 {
						return fmt.Errorf("operations differ from upstream's\nmissing:\n  %s\nextra:\n  %s",
							strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
					}
					return nil
				})
			}
		})
	}
}

// kubectlVersions returns the kubectl binaries of the versions the
// field-validation flow is checked with (1.27, 1.32, 1.33), skipping
// (failing under CI=true) when none is installed.
func kubectlVersions(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, v := range []string{"1.27", "1.32", "1.33"} {
		p := "/usr/lib/google-cloud-sdk/bin/kubectl." + v
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("kubectl 1.27, 1.32 or 1.33 is required under CI=true; none found in /usr/lib/google-cloud-sdk/bin")
		}
		t.Skip("no kubectl.1.27, kubectl.1.32 or kubectl.1.33 in /usr/lib/google-cloud-sdk/bin")
	}
	return out
}

// TestKubectlServerSideFieldValidation is the flow of issue 11: kubectl
// reads from the OpenAPI documents that the server validates fields
// itself, so `kubectl apply` (default validation) of a custom resource
// whose unknown fields its schema preserves succeeds, where client-side
// validation would reject them; with --validate=strict against a schema
// without them, the error is the server's; --dry-run=server works on
// built-in and custom resources.
func TestKubectlServerSideFieldValidation(t *testing.T) {
	binaries := kubectlVersions(t)
	preserve := true
	srv, err := memoryBackend.start()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{backend: memoryBackend.name, srv: srv}
	e.cs = kubernetes.NewForConfigOrDie(e.config())
	schemaless := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.fv.e2e.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "fv.e2e.kapi.dev",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	strict := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "strictthings.fv.e2e.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "fv.e2e.kapi.dev",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "strictthings", Singular: "strictthing", Kind: "StrictThing", ListKind: "StrictThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
	createCRD(t, e, schemaless)
	createCRD(t, e, strict)
	dyn := dynamic.NewForConfigOrDie(e.config())
	things := schema.GroupVersionResource{Group: "fv.e2e.kapi.dev", Version: "v1", Resource: "things"}
	strictThings := schema.GroupVersionResource{Group: "fv.e2e.kapi.dev", Version: "v1", Resource: "strictthings"}

	for _, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			ns := e.newNamespace(t)
			dir := t.TempDir()
			file := func(name, content string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			kc := e.srv.Kubeconfig
			run := func(args ...string) (string, string, error) {
				t.Helper()
				return runKubectl(t, kubectl, kc, append([]string{"-n", ns}, args...)...)
			}

			// Default validation, unknown fields a preserving schema keeps:
			// created, then changed (PATCH), both kept by the server.
			thing := "apiVersion: fv.e2e.kapi.dev/v1\nkind: Thing\nmetadata: {name: t1}\nspec: {anything: goes, nested: {x: 1}}\n"
			if out, stderr, err := run("apply", "-f", file("thing.yaml", thing)); err != nil || !strings.Contains(out, "thing.fv.e2e.kapi.dev/t1 created") {
				t.Fatalf("apply a Thing with unknown fields: %v\n%s%s", err, out, stderr)
			}
			changed := strings.Replace(thing, "goes", "changed", 1)
			if out, stderr, err := run("apply", "-f", file("thing2.yaml", changed)); err != nil || !strings.Contains(out, "configured") {
				t.Fatalf("apply the changed Thing: %v\n%s%s", err, out, stderr)
			}
			got, err := dyn.Resource(things).Namespace(ns).Get(context.Background(), "t1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v, _, _ := unstructured.NestedString(got.Object, "spec", "anything"); v != "changed" {
				t.Errorf("stored spec.anything = %q, want changed", v)
			}

			// Strict validation against a schema without the field: the
			// server's error, not kubectl's client-side ValidationError.
			bad := file("strict.yaml", "apiVersion: fv.e2e.kapi.dev/v1\nkind: StrictThing\nmetadata: {name: s1}\nspec: {size: 1, color: red}\n")
			out, stderr, err := run("apply", "--validate=strict", "-f", bad)
			if err == nil {
				t.Fatalf("apply --validate=strict of an unknown field succeeded:\n%s", out)
			}
			if !strings.Contains(stderr, "Error from server (BadRequest)") || !strings.Contains(stderr, `unknown field "spec.color"`) ||
				strings.Contains(stderr, "ValidationError") || strings.Contains(stderr, "error validating data") {
				t.Errorf("apply --validate=strict: got %q, want the server's BadRequest naming spec.color", stderr)
			}

			// Server-side dry runs, built-in and custom: reported, not stored.
			cm := file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {a: b}\n")
			if out, stderr, err := run("apply", "--dry-run=server", "-f", cm); err != nil || !strings.Contains(out, "configmap/dry created (server dry run)") {
				t.Fatalf("apply --dry-run=server a ConfigMap: %v\n%s%s", err, out, stderr)
			}
			if _, err := e.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the dry-run ConfigMap: got %v, want NotFound", err)
			}
			good := file("good.yaml", "apiVersion: fv.e2e.kapi.dev/v1\nkind: StrictThing\nmetadata: {name: s2}\nspec: {size: 2}\n")
			if out, stderr, err := run("apply", "--dry-run=server", "-f", good); err != nil || !strings.Contains(out, "strictthing.fv.e2e.kapi.dev/s2 created (server dry run)") {
				t.Fatalf("apply --dry-run=server a StrictThing: %v\n%s%s", err, out, stderr)
			}
			if _, err := dyn.Resource(strictThings).Namespace(ns).Get(context.Background(), "s2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the dry-run StrictThing: got %v, want NotFound", err)
			}
			// And on an existing object (a PATCH).
			if out, stderr, err := run("apply", "--dry-run=server", "-f", file("thing3.yaml", strings.Replace(thing, "goes", "dry", 1))); err != nil || !strings.Contains(out, "(server dry run)") {
				t.Fatalf("apply --dry-run=server the existing Thing: %v\n%s%s", err, out, stderr)
			}
			got, err = dyn.Resource(things).Namespace(ns).Get(context.Background(), "t1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v, _, _ := unstructured.NestedString(got.Object, "spec", "anything"); v != "changed" {
				t.Errorf("after a dry-run apply spec.anything = %q, want it unchanged", v)
			}
		})
	}
}
