package apiextensions

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// TestDefaultedFieldsAreTheWritersManagedFields writes a custom resource
// whose schema has defaults with create, a merge patch, an update and a
// status merge patch: as upstream's decoder defaults a request body (and
// a patch's result) before the field manager runs, each writer owns the
// defaulted fields it brought in.
//
// The expected fieldsV1 were recorded from kube-apiserver v1.37.2
// (2026-11-28): the same CRD and the same writes with kubectl create /
// patch --type=merge / replace / patch --subresource=status and
// --field-manager=creator, patcher, replacer, statuser, then `kubectl get
// -o jsonpath` of .metadata.managedFields.
func TestDefaultedFieldsAreTheWritersManagedFields(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: dfs.r.example.com}
spec:
  group: r.example.com
  scope: Namespaced
  names: {plural: dfs, singular: df, kind: Df, listKind: DfList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string}
              d: {type: integer, default: 10}
              o: {type: object, default: {x: 1}, properties: {x: {type: integer}, yv: {type: string, default: "yy"}}}
          status:
            type: object
            properties:
              s: {type: string, default: "st"}
`), crd); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	r := ts.dynamic(t).Resource(gvr("r.example.com", "v1", "dfs")).Namespace("ns1")
	eventually(t, waitTimeout, "dfs served", func() bool {
		_, err := r.List(ctx, metav1.ListOptions{})
		return err == nil
	})
	obj := func(spec string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if err := yaml.Unmarshal([]byte("apiVersion: r.example.com/v1\nkind: Df\nmetadata: {name: c1}\nspec: "+spec+"\n"), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	check := func(t *testing.T, want map[string]string) {
		t.Helper()
		u, err := r.Get(ctx, "c1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, e := range u.GetManagedFields() {
			got[e.Manager+"/"+e.Subresource] = string(e.FieldsV1.Raw)
		}
		if len(got) != len(want) {
			t.Errorf("managers %v, want %v", got, want)
		}
		for m, w := range want {
			if got[m] != w {
				t.Errorf("%s: got %s, want %s", m, got[m], w)
			}
		}
	}

	if _, err := r.Create(ctx, obj("{a: x}"), metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	check(t, map[string]string{
		"creator/": `{"f:spec":{".":{},"f:a":{},"f:d":{},"f:o":{".":{},"f:x":{},"f:yv":{}}}}`,
	})

	if _, err := r.Patch(ctx, "c1", types.MergePatchType, []byte(`{"spec":{"o":{"x":2}}}`), metav1.PatchOptions{FieldManager: "patcher"}); err != nil {
		t.Fatal(err)
	}
	check(t, map[string]string{
		"creator/": `{"f:spec":{".":{},"f:a":{},"f:d":{},"f:o":{".":{},"f:yv":{}}}}`,
		"patcher/": `{"f:spec":{"f:o":{"f:x":{}}}}`,
	})

	cur, err := r.Get(ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	up := obj("{a: z}")
	up.SetResourceVersion(cur.GetResourceVersion())
	if _, err := r.Update(ctx, up, metav1.UpdateOptions{FieldManager: "replacer"}); err != nil {
		t.Fatal(err)
	}
	afterUpdate := map[string]string{
		"creator/":  `{"f:spec":{".":{},"f:d":{},"f:o":{".":{},"f:yv":{}}}}`,
		"replacer/": `{"f:spec":{"f:a":{},"f:o":{"f:x":{}}}}`,
	}
	check(t, afterUpdate)

	if _, err := r.Patch(ctx, "c1", types.MergePatchType, []byte(`{"status":{}}`), metav1.PatchOptions{FieldManager: "statuser"}, "status"); err != nil {
		t.Fatal(err)
	}
	afterUpdate["statuser/status"] = `{"f:status":{".":{},"f:s":{}}}`
	check(t, afterUpdate)
	u, err := r.Get(ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(u.Object, "status", "s"); s != "st" {
		t.Errorf("status.s: got %q, want the default st", s)
	}
}
