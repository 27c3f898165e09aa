package apiextensions

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestCELTypedEndToEnd checks through the real server that a CRD with a
// rule that does not type-check is rejected with upstream's message, and
// that an update keeping values that became invalid (a tighter maximum,
// a new rule) ratchets while changing them fails.
func TestCELTypedEndToEnd(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()

	bad := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	spec := bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.name + 1 == 'x'"}}
	bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	_, err := crds.Create(ctx, bad, metav1.CreateOptions{})
	// The value is the internal ValidationRule, as kube-apiserver v1.37.2 renders it.
	want := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
		`{"Rule":"self.name + 1 == 'x'","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: ` +
		"compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create CRD with a type error: got %v, want 422 containing %q", err, want)
	}

	crd, err := crds.Create(ctx, crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
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
	eventually(t, waitTimeout, "tighter schema served", func() bool {
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
	if want := `spec.name: Invalid value: "longer": name too long`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("update changing name: got %v, want 422 containing %q", err, want)
	}
}

// TestCELRulesEndToEnd serves a CRD with a rule and checks the dynamic
// client gets the rule's message in a 422, and a transition rule on
// update.
func TestCELRulesEndToEnd(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.XValidations = apiextensionsv1.ValidationRules{{Rule: "!has(self.size) || self.size <= 5", Message: "size must be at most 5"}}
	name := spec.Properties["name"]
	name.XValidations = apiextensionsv1.ValidationRules{{Rule: "self == oldSelf", Message: "name is immutable"}}
	spec.Properties["name"] = name
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	ri := ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns1")

	_, err := ri.Create(ctx, widget("example.com/v1", "Widget", "big", map[string]any{"name": "a", "size": int64(7)}), metav1.CreateOptions{})
	if want := `spec: Invalid value: size must be at most 5`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create: got %v, want 422 containing %q", err, want)
	}
	w, err := ri.Create(ctx, widget("example.com/v1", "Widget", "ok", map[string]any{"name": "a", "size": int64(3)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	w.Object["spec"].(map[string]any)["name"] = "b"
	_, err = ri.Update(ctx, w, metav1.UpdateOptions{})
	if want := `spec.name: Invalid value: "b": name is immutable`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("update: got %v, want 422 containing %q", err, want)
	}
	w.Object["spec"].(map[string]any)["name"] = "a"
	w.Object["spec"].(map[string]any)["size"] = int64(4)
	if _, err := ri.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update keeping name: %v", err)
	}
}

// TestCELLibrariesEndToEnd installs through the real server a CRD whose
// rules use each library, and checks that a valid widget is created and
// one violating a rule is rejected with that rule's message.
func TestCELLibrariesEndToEnd(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	short := apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: int64Ptr(256)}
	for _, p := range []string{"memory", "address", "network", "endpoint", "label", "version"} {
		spec.Properties[p] = short
	}
	spec.XValidations = apiextensionsv1.ValidationRules{
		{Rule: "!has(self.memory) || quantity(self.memory).compareTo(quantity('1Gi')) <= 0", Message: "memory must be at most 1Gi"},
		{Rule: "!has(self.address) || !has(self.network) || cidr(self.network).containsIP(self.address)", Message: "address must be in network"},
		{Rule: "!has(self.endpoint) || url(self.endpoint).getScheme() == 'https'", Message: "endpoint must use https"},
		{Rule: "!has(self.label) || !format.dns1123Label().validate(self.label).hasValue()", MessageExpression: "'bad label: ' + self.label"},
		{Rule: "!has(self.version) || (isSemver(self.version, true) && semver(self.version, true).isGreaterThan(semver('1.27.0')))", Message: "version must be above 1.27.0"},
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	ri := ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns1")

	valid := func() map[string]any {
		return map[string]any{"name": "a", "memory": "512Mi", "address": "10.0.0.1", "network": "10.0.0.0/8",
			"endpoint": "https://example.com/x", "label": "ok", "version": "v1.28"}
	}
	if _, err := ri.Create(ctx, widget("example.com/v1", "Widget", "ok", valid()), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create valid widget: %v", err)
	}
	cases := []struct {
		field, value, want string
	}{
		{"memory", "2Gi", `spec: Invalid value: memory must be at most 1Gi`},
		{"memory", "lots", `spec: Invalid value: "object": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: memory must be at most 1Gi`},
		{"address", "11.0.0.1", `spec: Invalid value: address must be in network`},
		{"endpoint", "http://example.com", `spec: Invalid value: endpoint must use https`},
		{"label", "Bad_Label", `spec: Invalid value: bad label: Bad_Label`},
		{"version", "1.27.0", `spec: Invalid value: version must be above 1.27.0`},
	}
	for i, tc := range cases {
		s := valid()
		s[tc.field] = tc.value
		_, err := ri.Create(ctx, widget("example.com/v1", "Widget", fmt.Sprintf("bad%d", i), s), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create with %s=%q: got %v, want 422 containing %q", tc.field, tc.value, err, tc.want)
		}
	}
}
