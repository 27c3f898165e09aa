package fieldmanager

import (
	"errors"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var (
	configMapKind = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	namespaceKind = corev1.SchemeGroupVersion.WithKind("Namespace")
)

func newManager(t *testing.T, c Config) *Manager {
	t.Helper()
	m, err := New(c)
	if err != nil {
		t.Fatalf("New(%v): %v", c.Kind, err)
	}
	return m
}

func applied(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

func configMap(name string, data map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     data,
	}
}

// stored makes obj look stored (a uid), as the live object of an update.
func stored(obj runtime.Object) runtime.Object {
	m := obj.(metav1.Object)
	m.SetUID("0d5cd2b2-7c43-4c37-8d3a-3f3c5b1a5e7e")
	m.SetResourceVersion("7")
	return obj
}

func TestTypeConverterIsShared(t *testing.T) {
	t.Parallel()
	a, err := TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	b, err := TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("got two TypeConverters %p and %p, want one per process", a, b)
	}
}

func TestNewRejectsIncompleteKind(t *testing.T) {
	t.Parallel()
	for _, kind := range []schema.GroupVersionKind{{}, {Version: "v1"}, {Kind: "ConfigMap"}} {
		if _, err := New(Config{Kind: kind}); err == nil {
			t.Errorf("New(%v): got no error, want one", kind)
		}
	}
}

func TestUpdateRecordsManager(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{Kind: configMapKind})
	created := m.UpdateNoErrors(&corev1.ConfigMap{}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", Labels: map[string]string{"app": "a"}},
		Data:       map[string]string{"x": "1"},
	}, "creator")
	cm := created.(*corev1.ConfigMap)
	if got := len(cm.ManagedFields); got != 1 {
		t.Fatalf("got %d managedFields entries after create, want 1: %+v", got, cm.ManagedFields)
	}
	e := cm.ManagedFields[0]
	if e.Manager != "creator" || e.Operation != metav1.ManagedFieldsOperationUpdate || e.APIVersion != "v1" ||
		e.FieldsType != "FieldsV1" || e.Time == nil || e.Subresource != "" {
		t.Fatalf("got entry %+v, want an Update by creator in v1 with a time", e)
	}
	for _, want := range []string{`"f:x":{}`, `"f:app":{}`} {
		if !strings.Contains(string(e.FieldsV1.Raw), want) {
			t.Errorf("got fieldsV1 %s, want it to contain %s", e.FieldsV1.Raw, want)
		}
	}

	next := cm.DeepCopy()
	next.Data["y"] = "2"
	next.ManagedFields = nil // a client that does not send them keeps them
	updated := m.UpdateNoErrors(stored(cm.DeepCopy()), next, "updater").(*corev1.ConfigMap)
	managers := map[string]string{}
	for _, e := range updated.ManagedFields {
		managers[e.Manager] = string(e.FieldsV1.Raw)
	}
	if len(managers) != 2 || !strings.Contains(managers["updater"], `"f:y":{}`) || strings.Contains(managers["updater"], `"f:x"`) {
		t.Fatalf("got managers %v, want creator and updater owning only data.y", managers)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{Kind: configMapKind})
	live, err := m.Apply(&corev1.ConfigMap{}, applied(configMap("c", map[string]any{"x": "1"})), "a", false)
	if err != nil {
		t.Fatalf("apply by a: %v", err)
	}
	live = stored(live)

	tests := []struct {
		name    string
		obj     map[string]any
		manager string
		force   bool
		// wantCode is 0 for success.
		wantCode int32
		wantMsg  string
		wantData map[string]string
	}{
		{name: "another key by another manager", obj: configMap("c", map[string]any{"y": "2"}), manager: "b",
			wantData: map[string]string{"x": "1", "y": "2"}},
		{name: "same value by another manager shares the field", obj: configMap("c", map[string]any{"x": "1"}), manager: "b",
			wantData: map[string]string{"x": "1"}},
		{name: "conflict", obj: configMap("c", map[string]any{"x": "2"}), manager: "b",
			wantCode: 409, wantMsg: `Apply failed with 1 conflict: conflict with "a": .data.x`},
		{name: "force takes over", obj: configMap("c", map[string]any{"x": "2"}), manager: "b", force: true,
			wantData: map[string]string{"x": "2"}},
		{name: "unknown field", obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "spec": map[string]any{}},
			manager: "b", wantCode: 400, wantMsg: "field not declared in schema"},
		{name: "other kind", obj: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "c"}},
			manager: "b", wantCode: 400, wantMsg: "invalid object type: /v1, Kind=Secret"},
		{name: "other version", obj: map[string]any{"apiVersion": "v2", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}},
			manager: "b", wantCode: 400, wantMsg: "invalid object type: /v2, Kind=ConfigMap"},
		{name: "managedFields set", obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "managedFields": []any{map[string]any{"manager": "x"}}}},
			manager: "b", wantCode: 400, wantMsg: "metadata.managedFields must be nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := m.Apply(live.DeepCopyObject(), applied(tc.obj), tc.manager, tc.force)
			if tc.wantCode != 0 {
				var status apierrors.APIStatus
				if !errors.As(err, &status) {
					t.Fatalf("got error %v, want a %d status", err, tc.wantCode)
				}
				if got := status.Status(); got.Code != tc.wantCode || !strings.Contains(got.Message, tc.wantMsg) {
					t.Fatalf("got %d %q, want %d containing %q", got.Code, got.Message, tc.wantCode, tc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			cm := out.(*corev1.ConfigMap)
			if len(cm.Data) != len(tc.wantData) {
				t.Fatalf("got data %v, want %v", cm.Data, tc.wantData)
			}
			for k, v := range tc.wantData {
				if cm.Data[k] != v {
					t.Fatalf("got data %v, want %v", cm.Data, tc.wantData)
				}
			}
		})
	}
}

func TestApplyConflictCauses(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{Kind: configMapKind})
	live := stored(m.UpdateNoErrors(&corev1.ConfigMap{}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
		Data:       map[string]string{"x": "1", "y": "1"},
	}, "kubectl-client-side-apply"))
	_, err := m.Apply(live, applied(configMap("c", map[string]any{"x": "2", "y": "2"})), "ssa", false)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("got %v, want a conflict", err)
	}
	st := status.Status()
	wantMsg := "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using v1:\n- .data.x\n- .data.y"
	if st.Code != 409 || st.Reason != metav1.StatusReasonConflict || st.Message != wantMsg {
		t.Fatalf("got %d %s %q, want 409 Conflict %q", st.Code, st.Reason, st.Message, wantMsg)
	}
	if st.Details == nil || len(st.Details.Causes) != 2 {
		t.Fatalf("got details %+v, want 2 causes", st.Details)
	}
	for i, field := range []string{".data.x", ".data.y"} {
		c := st.Details.Causes[i]
		if c.Type != metav1.CauseTypeFieldManagerConflict || c.Field != field || c.Message != `conflict with "kubectl-client-side-apply" using v1` {
			t.Errorf("got cause %+v, want a FieldManagerConflict on %s", c, field)
		}
	}
}

// TestResetFields: a manager never owns the fields its (sub)resource
// resets (the storage's strategy resets their values).
func TestResetFields(t *testing.T) {
	t.Parallel()
	reset := func(path string) map[fieldpath.APIVersion]*fieldpath.Set {
		return map[fieldpath.APIVersion]*fieldpath.Set{"v1": fieldpath.NewSet(fieldpath.MakePathOrDie(path))}
	}
	live := stored(&corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	})
	obj := map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n"},
		"spec":   map[string]any{"finalizers": []any{"example.com/x"}},
		"status": map[string]any{"phase": "Terminating"},
	}
	tests := []struct {
		name, subresource, reset string
		wantOwned, wantNotOwned  string
	}{
		{name: "main resource", subresource: "", reset: "status", wantOwned: `"f:spec"`, wantNotOwned: `"f:status"`},
		{name: "status", subresource: "status", reset: "spec", wantOwned: `"f:status"`, wantNotOwned: `"f:spec"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, Config{Kind: namespaceKind, Subresource: tc.subresource, ResetFields: reset(tc.reset)})
			// force: the live object has no managers, so "before-first-apply"
			// owns its fields.
			out, err := m.Apply(live.DeepCopyObject(), applied(obj), "m", true)
			if err != nil {
				t.Fatal(err)
			}
			ns := out.(*corev1.Namespace)
			var entry *metav1.ManagedFieldsEntry
			for i := range ns.ManagedFields {
				if ns.ManagedFields[i].Manager == "m" {
					entry = &ns.ManagedFields[i]
				}
			}
			if entry == nil || entry.Subresource != tc.subresource {
				t.Fatalf("got managedFields %+v, want an entry of m with subresource %q", ns.ManagedFields, tc.subresource)
			}
			raw := string(entry.FieldsV1.Raw)
			if !strings.Contains(raw, tc.wantOwned) || strings.Contains(raw, tc.wantNotOwned) {
				t.Fatalf("got fields %s, want %s owned and %s not", raw, tc.wantOwned, tc.wantNotOwned)
			}
		})
	}
}

func TestFactoryServesEachGroup(t *testing.T) {
	t.Parallel()
	f := NewFactory(nil)
	fm, err := f(coordinationv1.SchemeGroupVersion.WithKind("Lease"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := fm.Apply(&coordinationv1.Lease{}, applied(map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": "l"}, "spec": map[string]any{"holderIdentity": "me"},
	}), "m", false)
	if err != nil {
		t.Fatal(err)
	}
	l := out.(*coordinationv1.Lease)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "me" || len(l.ManagedFields) != 1 ||
		l.ManagedFields[0].APIVersion != "coordination.k8s.io/v1" {
		t.Fatalf("got %+v, want holder me and one entry in coordination.k8s.io/v1", l)
	}
}
