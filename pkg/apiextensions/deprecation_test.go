package apiextensions

import (
	"context"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// Every request for a deprecated version of a CRD carries its
// deprecation warning (apiextensions-apiserver v0.37.2
// customresource_handler.go): the version's deprecationWarning, else
// "<group>/<version> <Kind> is deprecated; use <group>/<newest served,
// non-deprecated version above it> <Kind>". kube-apiserver v1.37.2
// answered `kubectl get widgets.v1beta1...` and a create through that
// version with "Warning: p4 v1beta1 is going away" (session 20).
func TestDeprecatedVersionWarnings(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := crdtest.NewCRD("example.com", "gizmos", "Gizmo", apiextensionsv1.NamespaceScoped)
	v1 := crd.Spec.Versions[0]
	v1.Storage = false
	alpha, beta, v2 := v1, v1, v1
	alpha.Name, alpha.Deprecated = "v1alpha1", true
	beta.Name, beta.Deprecated, beta.DeprecationWarning = "v1beta1", true, ptr.To("gizmos v1beta1 is going away")
	v2.Name, v2.Storage = "v2", true
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{alpha, beta, v1, v2}
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)

	for _, c := range []struct {
		version string
		want    []string
	}{
		{"v1alpha1", []string{"example.com/v1alpha1 Gizmo is deprecated; use example.com/v2 Gizmo"}},
		{"v1beta1", []string{"gizmos v1beta1 is going away"}},
		{"v1", nil},
		{"v2", nil},
	} {
		var w warnings
		cfg := ts.config()
		cfg.WarningHandler = &w
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ri := dc.Resource(gvr("example.com", c.version, "gizmos")).Namespace("ns1")
		eventually(t, waitTimeout, "list "+c.version, func() bool {
			w.mu.Lock()
			w.msgs = nil
			w.mu.Unlock()
			_, err := ri.List(ctx, metav1.ListOptions{})
			return err == nil
		})
		in := widget("example.com/"+c.version, "Gizmo", "g-"+c.version, map[string]any{"name": "a"})
		if _, err := ri.Create(ctx, in, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create through %s: %v", c.version, err)
		}
		w.mu.Lock()
		got := append([]string(nil), w.msgs...)
		w.mu.Unlock()
		var want []string
		if c.want != nil {
			want = append(append(want, c.want...), c.want...) // the list's and the create's
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: warnings %q, want %q", c.version, got, want)
		}
	}
}

// The default message names no replacement when no served,
// non-deprecated version is newer.
func TestDefaultDeprecationWarning(t *testing.T) {
	spec := apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gizmo"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v2", Served: true, Deprecated: true}, {Name: "v1", Served: true}, {Name: "v3", Served: false},
		}}
	if got, want := defaultDeprecationWarning("v2", spec), "example.com/v2 Gizmo is deprecated"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	spec.Versions = append(spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v10", Served: true}, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v3beta1", Served: true})
	if got, want := defaultDeprecationWarning("v2", spec), "example.com/v2 Gizmo is deprecated; use example.com/v10 Gizmo"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
