package fieldmanager

import (
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// unstructuredConvertor converts unstructured objects by rewriting their
// apiVersion (custom resources without conversion).
type unstructuredConvertor struct{}

func (unstructuredConvertor) Convert(in, out, _ any) error {
	out.(*unstructured.Unstructured).Object = runtime.DeepCopyJSON(in.(*unstructured.Unstructured).Object)
	return nil
}

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u := in.(*unstructured.Unstructured).DeepCopy()
	k, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("test", u.GroupVersionKind(), gv)
	}
	u.SetAPIVersion(k.GroupVersion().String())
	return u, nil
}

func (unstructuredConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, l, v string) (string, string, error) {
	return l, v, nil
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// A Manager for unstructured objects of a kind no scheme knows: the
// convertor, defaulter and creater of the Config replace the scheme.
func TestUnstructuredKind(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	m := newManager(t, Config{
		Kind:           kind,
		TypeConverter:  managedfields.NewDeducedTypeConverter(),
		Convertor:      unstructuredConvertor{},
		Defaulter:      noDefaults{},
		Creater:        unstructuredCreater{},
		CustomResource: true,
	})
	widget := func(spec map[string]any) *unstructured.Unstructured {
		return applied(map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default"},
			"spec":     spec,
		})
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(kind)
	out, err := m.Apply(live, widget(map[string]any{"size": int64(1)}), "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	if mf := got.GetManagedFields(); len(mf) != 1 || mf[0].Manager != "alice" || mf[0].APIVersion != "example.com/v1" {
		t.Fatalf("managedFields: got %+v, want one alice entry for example.com/v1", mf)
	}
	if _, err := m.Apply(got, widget(map[string]any{"size": int64(2)}), "bob", false); !apierrors.IsConflict(err) {
		t.Fatalf("bob's apply: got %v, want a conflict", err)
	}
	out, err = m.Apply(got, widget(map[string]any{"size": int64(2)}), "bob", true)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedInt64(out.(*unstructured.Unstructured).Object, "spec", "size"); v != 2 {
		t.Fatalf("spec.size after forced apply: got %d, want 2", v)
	}
	upd := out.DeepCopyObject().(*unstructured.Unstructured)
	_ = unstructured.SetNestedField(upd.Object, "x", "spec", "color")
	// alice still owns spec itself (deduced maps are granular).
	res := m.UpdateNoErrors(out, upd, "carol").(*unstructured.Unstructured)
	var managers []string
	for _, e := range res.GetManagedFields() {
		managers = append(managers, e.Manager+"/"+string(e.Operation))
	}
	if want := []string{"alice/Apply", "bob/Apply", "carol/Update"}; !reflect.DeepEqual(managers, want) {
		t.Fatalf("managers: got %v, want %v", managers, want)
	}
}
