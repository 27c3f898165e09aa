package generic

import (
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func TestStatusSubresource(t *testing.T) {
	main := newDeploymentStore(t, newBackend(t))
	status := NewStatusREST(main, StatusStrategy{UpdateStrategy: main.UpdateStrategy, GroupVersions: []schema.GroupVersion{appsv1.SchemeGroupVersion}})
	ctx := nsCtx("ns")
	mustCreate(t, main, ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1))}})

	// /status changes only status: spec, labels and generation stay.
	out, created, err := status.Update(ctx, "d", modify(func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr(int32(5))
		d.Labels = map[string]string{"a": "b"}
		d.Status.Replicas = 3
		d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}
	}), nil, nil, true, &metav1.UpdateOptions{})
	if err != nil || created {
		t.Fatalf("status update: %v %v", created, err)
	}
	d := out.(*appsv1.Deployment)
	if *d.Spec.Replicas != 1 || d.Labels != nil || d.Status.Replicas != 3 || d.Generation != 1 {
		t.Errorf("got replicas %d labels %v status %d generation %d, want 1, none, 3, 1", *d.Spec.Replicas, d.Labels, d.Status.Replicas, d.Generation)
	}
	if len(d.ManagedFields) != 1 || d.ManagedFields[0].Manager != "kubelet" {
		t.Errorf("got managedFields %v, want the request's", d.ManagedFields)
	}

	// The main resource changes spec and keeps status.
	out, _, err = main.Update(ctx, "d", modify(func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr(int32(2))
		d.Status.Replicas = 0
	}), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("main update: %v", err)
	}
	d = out.(*appsv1.Deployment)
	if *d.Spec.Replicas != 2 || d.Status.Replicas != 3 || d.Generation != 2 {
		t.Errorf("got replicas %d status %d generation %d, want 2, 3, 2", *d.Spec.Replicas, d.Status.Replicas, d.Generation)
	}

	// /status never creates.
	_, _, err = status.Update(ctx, "missing", replace(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}), nil, nil, true, &metav1.UpdateOptions{})
	wantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound, `deployments.apps "missing" not found`)

	got, err := status.Get(ctx, "d", &metav1.GetOptions{})
	if err != nil || got.(*appsv1.Deployment).Status.Replicas != 3 {
		t.Errorf("status get: %v", err)
	}

	// Reset fields for server-side apply.
	want := func(path string) map[fieldpath.APIVersion]*fieldpath.Set {
		return map[fieldpath.APIVersion]*fieldpath.Set{"apps/v1": fieldpath.NewSet(fieldpath.MakePathOrDie(path))}
	}
	for _, c := range []struct {
		name string
		got  map[fieldpath.APIVersion]*fieldpath.Set
		want map[fieldpath.APIVersion]*fieldpath.Set
	}{
		{"main", main.GetResetFields(), want("status")},
		{"status", status.GetResetFields(), want("spec")},
	} {
		if len(c.got) != 1 || c.got["apps/v1"] == nil || !c.got["apps/v1"].Equals(c.want["apps/v1"]) {
			t.Errorf("%s: got reset fields %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestStatusHelpers(t *testing.T) {
	t.Run("typed", func(t *testing.T) {
		dst := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"new"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
		src := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "old"},
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"old"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
		a := dst.DeepCopy()
		must(CopyStatus(a, src))
		if a.Status.Phase != corev1.NamespaceActive || a.Spec.Finalizers[0] != "new" {
			t.Errorf("CopyStatus: got %+v", a)
		}
		b := dst.DeepCopy()
		must(CopyAllButStatus(b, src))
		if b.Status.Phase != corev1.NamespaceTerminating || b.Spec.Finalizers[0] != "old" || b.Name != "old" || len(b.ManagedFields) != 1 {
			t.Errorf("CopyAllButStatus: got %+v", b)
		}
		c := dst.DeepCopy()
		must(ClearStatus(c))
		if c.Status.Phase != "" {
			t.Errorf("ClearStatus: got %+v", c.Status)
		}
		if err := CopyStatus(&corev1.ConfigMap{}, &corev1.ConfigMap{}); err == nil {
			t.Error("CopyStatus of a type without status: got nil error")
		}
	})
	t.Run("unstructured", func(t *testing.T) {
		dst := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "new"}, "spec": "new", "status": "new"}}
		src := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "old"}, "spec": "old", "status": "old"}}
		a := dst.DeepCopy()
		must(CopyStatus(a, src))
		if a.Object["status"] != "old" || a.Object["spec"] != "new" {
			t.Errorf("CopyStatus: got %v", a.Object)
		}
		b := dst.DeepCopy()
		must(CopyAllButStatus(b, src))
		if b.Object["status"] != "new" || b.Object["spec"] != "old" || b.GetName() != "old" {
			t.Errorf("CopyAllButStatus: got %v", b.Object)
		}
		must(ClearStatus(b))
		if _, ok := b.Object["status"]; ok {
			t.Errorf("ClearStatus: got %v", b.Object)
		}
	})
	t.Run("spec changed", func(t *testing.T) {
		base := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1))}}
		meta := base.DeepCopy()
		meta.Labels = map[string]string{"a": "b"}
		meta.Status.Replicas = 4
		spec := base.DeepCopy()
		spec.Spec.Replicas = ptr(int32(2))
		u := func(spec any) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}, "spec": spec, "status": "s"}}
		}
		uMeta := u("a")
		uMeta.SetLabels(map[string]string{"a": "b"})
		uMeta.Object["status"] = "other"
		uExtra := u("a")
		uExtra.Object["data"] = "new top-level field"
		cases := []struct {
			name string
			got  bool
			want bool
		}{
			{"metadata and status only", SpecChanged(meta, base), false},
			{"spec", SpecChanged(spec, base), true},
			{"unstructured metadata and status only", SpecChanged(uMeta, u("a")), false},
			{"unstructured spec", SpecChanged(u("b"), u("a")), true},
			{"unstructured new top-level field", SpecChanged(uExtra, u("a")), true},
			{"unstructured removed top-level field", SpecChanged(u("a"), uExtra), true},
		}
		for _, c := range cases {
			if c.got != c.want {
				t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
			}
		}
	})
}
