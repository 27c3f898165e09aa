package openapi

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func TestParserFromStructured(t *testing.T) {
	t.Parallel()
	p, err := testDefs().Parser()
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", Labels: map[string]string{"a": "b"}},
		Data:       map[string]string{"k": "v"},
	}
	tv, err := p.Type("io.k8s.api.core.v1.ConfigMap").FromStructured(cm)
	if err != nil {
		t.Fatalf("ConfigMap FromStructured: %v", err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []fieldpath.Path{
		fieldpath.MakePathOrDie("data", "k"),
		fieldpath.MakePathOrDie("metadata", "labels", "a"),
	} {
		if !set.Has(path) {
			t.Errorf("ConfigMap field set %v lacks %v", set, path)
		}
	}
}

func TestTypeConverter(t *testing.T) {
	t.Parallel()
	tc, err := testDefs().TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: "nginx"},
					{Name: "sidecar", Image: "busybox"},
				}},
			},
		},
	}
	tv, err := tc.ObjectToTyped(deploy)
	if err != nil {
		t.Fatalf("Deployment ObjectToTyped: %v", err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	// Containers are a map keyed by name: each one is its own element.
	for _, name := range []string{"app", "sidecar"} {
		path := fieldpath.MakePathOrDie("spec", "template", "spec", "containers",
			fieldpath.KeyByFields("name", name), "image")
		if !set.Has(path) {
			t.Errorf("Deployment field set lacks %v:\n%v", path, set)
		}
	}

	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Data: map[string]string{"a": "b"}}
	if _, err := tc.ObjectToTyped(cm); err != nil {
		t.Errorf("ConfigMap ObjectToTyped: %v", err)
	}

	obj, err := tc.TypedToObject(tv)
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*unstructured.Unstructured).GetName(); got != "web" {
		t.Errorf("TypedToObject name = %q, want web", got)
	}

	unknown := &unstructured.Unstructured{}
	unknown.SetAPIVersion("example.com/v1")
	unknown.SetKind("Widget")
	if _, err := tc.ObjectToTyped(unknown); !runtime.IsNotRegisteredError(err) {
		t.Errorf("ObjectToTyped(example.com/v1 Widget) error = %v, want a not-registered error", err)
	}

	bad := mustUnstructured(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"dataa":{"a":"b"}}`)
	if _, err := tc.ObjectToTyped(bad); err == nil {
		t.Error("ObjectToTyped(ConfigMap with unknown field dataa): got no error, want one")
	}
}

func mustUnstructured(t *testing.T, j string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(j)); err != nil {
		t.Fatalf("unmarshal %s: %v", j, err)
	}
	return u
}

func deployment(containers string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
	"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
	"spec":{"containers":[` + containers + `]}}}}`
}

func configMap(data string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{` + data + `}}`
}

// TestServerSideApply runs appliers through apimachinery's field manager on
// the type information: conflicts must come out per field (map keys, list
// elements by merge key), not per whole map or list.
func TestServerSideApply(t *testing.T) {
	t.Parallel()
	tc, err := testDefs().TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	type apply struct {
		manager, obj string
		force        bool
		// wantConflict lists substrings of the 409 message; nil: success.
		wantConflict []string
	}
	tests := []struct {
		name    string
		gvk     string
		applies []apply
		check   func(t *testing.T, live *unstructured.Unstructured, managed []metav1.ManagedFieldsEntry)
	}{{
		name: "deployment containers merge by name",
		gvk:  "apps/v1/Deployment",
		applies: []apply{
			{manager: "alice", obj: deployment(`{"name":"app","image":"nginx:1"}`)},
			// Another container: another element, no conflict (an atomic
			// list would conflict here).
			{manager: "bob", obj: deployment(`{"name":"sidecar","image":"busybox"}`)},
			// The same container's image: a conflict with alice on that field.
			{manager: "bob", obj: deployment(`{"name":"sidecar","image":"busybox"},{"name":"app","image":"nginx:2"}`),
				wantConflict: []string{`conflict with "alice"`, `.spec.template.spec.containers[name="app"].image`}},
			{manager: "bob", obj: deployment(`{"name":"sidecar","image":"busybox"},{"name":"app","image":"nginx:2"}`), force: true},
		},
		check: func(t *testing.T, live *unstructured.Unstructured, managed []metav1.ManagedFieldsEntry) {
			containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
			images := map[string]any{}
			for _, c := range containers {
				m := c.(map[string]any)
				images[m["name"].(string)] = m["image"]
			}
			if len(images) != 2 || images["app"] != "nginx:2" || images["sidecar"] != "busybox" {
				t.Errorf("live containers = %v, want app=nginx:2 and sidecar=busybox", containers)
			}
			owners := ownersOf(t, managed, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`)
			if len(owners) != 1 || owners[0] != "bob" {
				t.Errorf("owners of containers[app].image = %v, want [bob]", owners)
			}
		},
	}, {
		name: "configmap data keys are separate fields",
		gvk:  "/v1/ConfigMap",
		applies: []apply{
			{manager: "alice", obj: configMap(`"a":"1"`)},
			{manager: "bob", obj: configMap(`"b":"2"`)},
			{manager: "bob", obj: configMap(`"a":"3","b":"2"`), wantConflict: []string{`conflict with "alice"`, `.data.a`}},
			// alice gives up .data.a by not applying it; bob may now take it.
			{manager: "alice", obj: configMap(``)},
			{manager: "bob", obj: configMap(`"a":"3","b":"2"`)},
		},
		check: func(t *testing.T, live *unstructured.Unstructured, managed []metav1.ManagedFieldsEntry) {
			data, _, _ := unstructured.NestedStringMap(live.Object, "data")
			if data["a"] != "3" || data["b"] != "2" || len(data) != 2 {
				t.Errorf("live data = %v, want a=3 b=2", data)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := strings.SplitN(tt.gvk, "/", 3)
			fm := managedfieldstest.NewTestFieldManager(tc, gvk(parts[0], parts[1], parts[2]))
			for i, a := range tt.applies {
				err := fm.Apply(mustUnstructured(t, a.obj), a.manager, a.force)
				if a.wantConflict == nil {
					if err != nil {
						t.Fatalf("apply %d by %s: %v", i, a.manager, err)
					}
					continue
				}
				if !apierrors.IsConflict(err) {
					t.Fatalf("apply %d by %s: error %v, want a conflict", i, a.manager, err)
				}
				for _, want := range a.wantConflict {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("apply %d by %s: conflict %q does not mention %q", i, a.manager, err, want)
					}
				}
			}
			live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fm.Live())
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, &unstructured.Unstructured{Object: live}, fm.ManagedFields())
		})
	}
}

// ownersOf returns the managers whose field set contains the given one.
func ownersOf(t *testing.T, managed []metav1.ManagedFieldsEntry, fieldsJSON string) []string {
	t.Helper()
	want := &fieldpath.Set{}
	if err := want.FromJSON(strings.NewReader(fieldsJSON)); err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, e := range managed {
		if e.FieldsV1 == nil {
			continue
		}
		got := &fieldpath.Set{}
		if err := got.FromJSON(strings.NewReader(string(e.FieldsV1.Raw))); err != nil {
			t.Fatal(err)
		}
		if want.Difference(got).Empty() {
			owners = append(owners, e.Manager)
		}
	}
	return owners
}
