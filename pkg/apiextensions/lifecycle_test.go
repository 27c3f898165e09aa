package apiextensions

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// TestRestartServesStoredCRDs checks that a server started on storage
// holding an established CRD serves its resources as soon as
// CRDInformerHasNotSynced is closed.
func TestRestartServesStoredCRDs(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	first := startServer(t, serverOptions{backend: b})
	crd, err := first.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.ClusterScoped), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, first.crdClient(t), crd.Name)
	if _, err := first.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Create(ctx, widget("example.com/v1", "Widget", "w", map[string]any{"name": "n"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first.close()

	second := startServer(t, serverOptions{backend: b})
	got, err := second.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get right after the restart: %v", err)
	}
	if got.GetName() != "w" {
		t.Errorf("got %v", got.Object)
	}
}

// TestNameConflicts checks NamesAccepted against the other CRDs of a group.
func TestNameConflicts(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	first := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	if _, err := crds.Create(ctx, first, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), first.Name)

	cases := []struct {
		name, plural, kind string
		shortNames         []string
		wantReason         string
	}{
		{name: "short name taken", plural: "gadgets", kind: "Gadget", shortNames: []string{"widget"}, wantReason: "ShortNamesConflict"},
		{name: "kind taken", plural: "gizmos", kind: "Widget", wantReason: "ListKindConflict"}, // the last conflict found names the reason, as upstream
		{name: "singular taken", plural: "wi", kind: "Thing", wantReason: "PluralConflict"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := crdtest.NewCRD("example.com", tc.plural, tc.kind, apiextensionsv1.NamespaceScoped)
			c.Spec.Names.ShortNames = tc.shortNames
			if _, err := crds.Create(ctx, c, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var got *apiextensionsv1.CustomResourceDefinition
			eventually(t, waitTimeout, "NamesAccepted=False", func() bool {
				got, _ = crds.Get(ctx, c.Name, metav1.GetOptions{})
				cond := findCondition(got, apiextensionsv1.NamesAccepted)
				return cond != nil && cond.Status == apiextensionsv1.ConditionFalse
			})
			if cond := findCondition(got, apiextensionsv1.NamesAccepted); cond.Reason != tc.wantReason {
				t.Errorf("got reason %q (%s), want %q", cond.Reason, cond.Message, tc.wantReason)
			}
			if cond := findCondition(got, apiextensionsv1.Established); cond == nil || cond.Status != apiextensionsv1.ConditionFalse || cond.Reason != "NotAccepted" {
				t.Errorf("got Established %+v, want False NotAccepted", cond)
			}
		})
	}
}

// TestTerminating checks a CRD whose custom resource has a finalizer:
// the CRD stays Terminating (creates refused with 405) until the finalizer
// is removed.
func TestTerminating(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Create(ctx, crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	ri := ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns")
	held := widget("example.com/v1", "Widget", "held", map[string]any{"name": "h"})
	held.SetFinalizers([]string{"example.com/hold"})
	if _, err := ri.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "InstanceDeletionCheck", func() bool {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := findCondition(got, apiextensionsv1.Terminating)
		return c != nil && c.Reason == "InstanceDeletionCheck" && hasFinalizer(got, cleanupFinalizer)
	})
	_, err = ri.Create(ctx, widget("example.com/v1", "Widget", "late", map[string]any{"name": "l"}), metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "not allowed while custom resource definition is terminating") {
		t.Errorf("create while terminating: got %v, want 405", err)
	}
	if _, err := ri.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove the finalizer: %v", err)
	}
	eventually(t, waitTimeout, "CRD gone", func() bool {
		_, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// TestVersionsAndSharedRoot serves two versions of one CRD (stored as v1,
// read as either: apiVersion rewritten) and a second CRD in the same
// group-version.
func TestVersionsAndSharedRoot(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	two := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	beta := two.Spec.Versions[0]
	beta.Name, beta.Storage = "v1beta1", false
	two.Spec.Versions = append(two.Spec.Versions, beta)
	other := crdtest.NewCRD("example.com", "gadgets", "Gadget", apiextensionsv1.NamespaceScoped)
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{two, other} {
		if _, err := crds.Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitEstablished(t, ts.crdClient(t), c.Name)
	}
	beta1 := ts.dynamic(t).Resource(gvr("example.com", "v1beta1", "widgets")).Namespace("ns")
	if _, err := beta1.Create(ctx, widget("example.com/v1beta1", "Widget", "w", map[string]any{"name": "n"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := ts.dynamic(t).Resource(gvr("example.com", "v1", "widgets")).Namespace("ns")
	got, err := v1.Get(ctx, "w", metav1.GetOptions{})
	if err != nil || got.GetAPIVersion() != "example.com/v1" {
		t.Fatalf("get as v1: %v %v", got, err)
	}
	list, err := beta1.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetAPIVersion() != "example.com/v1beta1" || list.GetAPIVersion() != "example.com/v1beta1" {
		t.Fatalf("list as v1beta1: %v %v", list, err)
	}
	if _, err := ts.dynamic(t).Resource(gvr("example.com", "v1", "gadgets")).Namespace("ns").Create(ctx, widget("example.com/v1", "Gadget", "g", map[string]any{"name": "n"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a gadget in the shared group-version: %v", err)
	}
	rl, err := ts.discovery(t).ServerResourcesForGroupVersion("example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rl.APIResources {
		names = append(names, r.Name)
	}
	if want := "gadgets gadgets/status widgets widgets/status"; strings.Join(names, " ") != want {
		t.Errorf("got resources %v, want %s", names, want)
	}

	// The OpenAPI v3 document names the kinds for kubectl explain.
	code, body := ts.do(t, http.MethodGet, "/openapi/v3/apis/example.com/v1", "")
	if code != http.StatusOK {
		t.Fatalf("openapi: %d %s", code, body)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				GVK []map[string]string `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"com.example.v1.Widget", "com.example.v1.WidgetList", "com.example.v1.Gadget"} {
		s, ok := doc.Components.Schemas[name]
		if !ok || len(s.GVK) != 1 || s.GVK[0]["group"] != "example.com" || s.GVK[0]["version"] != "v1" {
			t.Errorf("schema %s: got %+v (present %v)", name, s, ok)
		}
	}
}
