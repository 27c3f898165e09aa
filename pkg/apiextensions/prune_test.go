package apiextensions

import (
	"context"
	"reflect"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// warnings collects Warning headers.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func TestPruneAndDefaultEndToEnd(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd := crdtest.NewCRD("example.com", "gadgets", "Gadget", apiextensionsv1.NamespaceScoped)
	sch := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := sch.Properties["spec"]
	spec.Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"red"`)}}
	sch.Properties["spec"] = spec
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)

	var w warnings
	cfg := ts.config()
	cfg.WarningHandler = &w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(gvr("example.com", "v1", "gadgets")).Namespace("ns1")
	in := widget("example.com/v1", "Gadget", "g1", map[string]any{"name": "a", "foo": "bar"})
	in.Object["top"] = int64(1)
	var created map[string]any
	eventually(t, waitTimeout, "create", func() bool {
		u, err := ri.Create(ctx, in.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			return false
		}
		created = u.Object
		return true
	})
	w.mu.Lock()
	gotWarnings := append([]string(nil), w.msgs...)
	w.mu.Unlock()
	if want := []string{`unknown field "spec.foo"`, `unknown field "top"`}; !reflect.DeepEqual(gotWarnings, want) {
		t.Errorf("got warnings %q, want %q", gotWarnings, want)
	}
	got, err := ri.Get(ctx, "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	for _, o := range []map[string]any{created, got.Object} {
		if _, ok := o["top"]; ok {
			t.Errorf("got top-level field top kept, want pruned: %v", o)
		}
		if want := map[string]any{"name": "a", "color": "red"}; !reflect.DeepEqual(o["spec"], want) {
			t.Errorf("got spec %v, want %v", o["spec"], want)
		}
	}

	// Strict: a 400 on create and update.
	_, err = ri.Create(ctx, in.DeepCopy(), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	// As kube-apiserver v1.37.2 words it (its decoder reports what it prunes).
	if want := `Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.foo", unknown field "top"`; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("got strict create error %v, want BadRequest %q", err, want)
	}
	upd := got.DeepCopy()
	upd.Object["spec"].(map[string]any)["bar"] = int64(1)
	_, err = ri.Update(ctx, upd, metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict})
	if want := `Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.bar"`; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("got strict update error %v, want BadRequest %q", err, want)
	}
	// Ignore: pruned silently.
	w.mu.Lock()
	w.msgs = nil
	w.mu.Unlock()
	updated, err := ri.Update(ctx, upd, metav1.UpdateOptions{FieldValidation: metav1.FieldValidationIgnore})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, ok := updated.Object["spec"].(map[string]any)["bar"]; ok {
		t.Errorf("got spec.bar kept, want pruned: %v", updated.Object)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.msgs) != 0 {
		t.Errorf("got warnings %q under Ignore, want none", w.msgs)
	}
}

func TestDefaultOnRead(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Create(ctx, crdtest.NewCRD("example.com", "gizmos", "Gizmo", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	ri := ts.dynamic(t).Resource(gvr("example.com", "v1", "gizmos")).Namespace("ns1")
	eventually(t, waitTimeout, "create", func() bool {
		_, err := ri.Create(ctx, widget("example.com/v1", "Gizmo", "g1", map[string]any{"name": "a"}), metav1.CreateOptions{})
		return err == nil
	})
	// A list before the update: the memory backend keeps what it decoded
	// for it (the watch cache on etcd does too), which must not outlive
	// the schema it was decoded under.
	if l, err := ri.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v", err)
	}
	// A default added later shows on reads of the stored object.
	crd, err = crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sch := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := sch.Properties["spec"]
	spec.Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}}
	sch.Properties["spec"] = spec
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update CRD: %v", err)
	}
	eventually(t, waitTimeout, "defaulted get and list", func() bool {
		got, err := ri.Get(ctx, "g1", metav1.GetOptions{})
		if err != nil {
			return false
		}
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			return false
		}
		return got.Object["spec"].(map[string]any)["color"] == "blue" && l.Items[0].Object["spec"].(map[string]any)["color"] == "blue"
	})
}
