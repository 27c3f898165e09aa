package apiextensions

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCELTypedEndToEnd checks through the real server that a CRD with a
// rule that does not type-check is rejected with upstream's message, and
// that an update keeping values that became invalid (a tighter maximum,
// a new rule) ratchets while changing them fails.
func TestCELTypedEndToEnd(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()

	bad := newCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	spec := bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.name + 1 == 'x'"}}
	bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	_, err := crds.Create(ctx, bad, metav1.CreateOptions{})
	want := "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
		`apiextensions.ValidationRule{Rule:"self.name + 1 == 'x'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ` +
		"compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create CRD with a type error: got %v, want 422 containing %q", err, want)
	}

	crd, err := crds.Create(ctx, newCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name, 5*time.Second)
	ri := ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns1")
	w, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w", map[string]any{"name": "long", "size": int64(7)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create widget: %v", err)
	}

	// Tighten: size at most 5, name shorter than 3 (a rule on name: a
	// rule on spec would not ratchet, spec changes below).
	crd, err = crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec = crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	size := spec.Properties["size"]
	size.Maximum = ptr.To(5.0)
	spec.Properties["size"] = size
	name := spec.Properties["name"]
	name.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size() < 3", Message: "name too long"}}
	spec.Properties["name"] = name
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update CRD: %v", err)
	}
	eventually(t, 5*time.Second, "tighter schema served", func() bool {
		_, err := ri.Create(ctx, widget("example.com/v1", "Widget", "probe", map[string]any{"name": "long", "size": int64(7)}), metav1.CreateOptions{})
		return apierrors.IsInvalid(err)
	})

	w.Object["spec"].(map[string]any)["color"] = "red"
	w, err = ri.Update(ctx, w, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update keeping invalid values: got %v, want them ratcheted", err)
	}
	w.Object["spec"].(map[string]any)["size"] = int64(8)
	_, err = ri.Update(ctx, w, metav1.UpdateOptions{})
	if want := "spec.size: Invalid value: 8: spec.size in body should be less than or equal to 5"; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("update changing size: got %v, want 422 containing %q", err, want)
	}
	w.Object["spec"].(map[string]any)["size"] = int64(7)
	w.Object["spec"].(map[string]any)["name"] = "longer"
	_, err = ri.Update(ctx, w, metav1.UpdateOptions{})
	if want := `spec.name: Invalid value: "string": name too long`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("update changing name: got %v, want 422 containing %q", err, want)
	}
}
