package replicationcontroller

import (
	"context"
	"slices"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// controller is a controller as decoding (which defaults) gives it.
func controller(name string) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](3),
			Selector: map[string]string{"app": "nginx"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyAlways,
					Containers:    []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}, {Name: "log", Image: "busybox"}},
				},
			},
		},
	}
	scheme.Scheme.Default(rc)
	return rc
}

func newStores(t *testing.T) (*generic.Store, *generic.StatusREST, *generic.ScaleREST) {
	t.Helper()
	store, status, scale, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Destroy)
	return store, status, scale
}

func TestReplicationControllerStore(t *testing.T) {
	store, status, _ := newStores(t)
	ctx := registrytest.Context("", "v1", "replicationcontrollers", "default")
	if !slices.Equal(store.ShortNames(), []string{"rc"}) || !slices.Equal(store.Categories(), []string{"all"}) {
		t.Errorf("got short names %v, categories %v; want [rc], [all]", store.ShortNames(), store.Categories())
	}
	rc := controller("nginx")
	rc.Status.Replicas = 7
	obj, err := store.Create(ctx, rc, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	created := obj.(*corev1.ReplicationController)
	if created.Generation != 1 || created.Status.Replicas != 0 {
		t.Errorf("got generation %d, status.replicas %d; want 1 and a cleared status", created.Generation, created.Status.Replicas)
	}
	// A spec change bumps the generation; a metadata change does not.
	upd := created.DeepCopy()
	upd.Labels = map[string]string{"tier": "web"}
	obj, _, err = store.Update(ctx, rc.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := obj.(*corev1.ReplicationController).Generation; g != 1 {
		t.Errorf("got generation %d after a label change, want 1", g)
	}
	upd = obj.(*corev1.ReplicationController).DeepCopy()
	upd.Spec.MinReadySeconds = 5
	upd.Status.Replicas = 9
	obj, _, err = store.Update(ctx, rc.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*corev1.ReplicationController); got.Generation != 2 || got.Status.Replicas != 0 {
		t.Errorf("got generation %d, status.replicas %d; want 2 and the status kept", got.Generation, got.Status.Replicas)
	}
	// /status changes the status, never the spec nor the generation.
	upd = obj.(*corev1.ReplicationController).DeepCopy()
	upd.Status = corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2, ObservedGeneration: 2}
	upd.Spec.MinReadySeconds = 0
	obj, _, err = status.Update(ctx, rc.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	if got := obj.(*corev1.ReplicationController); got.Status.ReadyReplicas != 2 || got.Spec.MinReadySeconds != 5 || got.Generation != 2 {
		t.Errorf("got ready %d, minReadySeconds %d, generation %d; want 2, 5, 2", got.Status.ReadyReplicas, got.Spec.MinReadySeconds, got.Generation)
	}
	upd = obj.(*corev1.ReplicationController).DeepCopy()
	upd.Status.ReadyReplicas = 4
	_, _, err = status.Update(ctx, rc.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid status.readyReplicas"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	// Field selector status.replicas.
	if _, err := store.Create(ctx, controller("other"), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.replicas", "3")})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*corev1.ReplicationControllerList).Items; len(items) != 1 || items[0].Name != "nginx" {
		t.Errorf("got %d controllers with status.replicas=3, want nginx only", len(items))
	}
}

// scaleTo is a rest.UpdatedObjectInfo setting a Scale's replicas.
type scaleTo int32

func (scaleTo) Preconditions() *metav1.Preconditions { return nil }
func (s scaleTo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	scale := old.(*autoscalingv1.Scale).DeepCopy()
	scale.Spec.Replicas = int32(s)
	return scale, nil
}

func TestReplicationControllerScale(t *testing.T) {
	store, _, scale := newStores(t)
	ctx := registrytest.Context("", "v1", "replicationcontrollers", "default")
	if _, err := store.Create(ctx, controller("nginx"), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := scale.Get(ctx, "nginx", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := obj.(*autoscalingv1.Scale); s.Spec.Replicas != 3 || s.Status.Selector != "app=nginx" {
		t.Errorf("got scale %+v, want 3 replicas selected by app=nginx", s)
	}
	obj, _, err = scale.Update(ctx, "nginx", scaleTo(5), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := obj.(*autoscalingv1.Scale); s.Spec.Replicas != 5 {
		t.Errorf("got %d replicas, want 5", s.Spec.Replicas)
	}
	obj, err = store.Get(ctx, "nginx", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc := obj.(*corev1.ReplicationController); *rc.Spec.Replicas != 5 || rc.Generation != 2 {
		t.Errorf("got %d replicas, generation %d; want 5 and 2", *rc.Spec.Replicas, rc.Generation)
	}
	_, _, err = scale.Update(ctx, "nginx", scaleTo(-1), nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.replicas"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
}

// Through core/v1, a delete without propagation policy orphans the pods
// (the "orphan" finalizer, left for the garbage collector); with
// Background it deletes at once.
func TestReplicationControllerDeleteOrphansByDefault(t *testing.T) {
	store, _, _ := newStores(t)
	ctx := registrytest.Context("", "v1", "replicationcontrollers", "default")
	for _, name := range []string{"a", "b"} {
		if _, err := store.Create(ctx, controller(name), nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	obj, deleted, err := store.Delete(ctx, "a", nil, &metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc := obj.(*corev1.ReplicationController); deleted || !slices.Contains(rc.Finalizers, metav1.FinalizerOrphanDependents) || rc.DeletionTimestamp == nil {
		t.Errorf("got deleted %t, finalizers %v; want the controller kept with the orphan finalizer", deleted, rc.Finalizers)
	}
	background := metav1.DeletePropagationBackground
	if _, deleted, err := store.Delete(ctx, "b", nil, &metav1.DeleteOptions{PropagationPolicy: &background}); err != nil || !deleted {
		t.Errorf("got deleted %t, %v; want b deleted at once", deleted, err)
	}
}

func TestReplicationControllerTable(t *testing.T) {
	rc := controller("nginx")
	rc.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * time.Second))
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printReplicationController columns (pkg/printers/internalversion/printers.go).
	if want := []string{"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"}; !slices.Equal(names, want) {
		t.Errorf("got columns %v, want %v", names, want)
	}
	want := []any{"nginx", int64(3), int64(2), int64(1), "10s", "nginx,log", "nginx:1.27,busybox", "app=nginx"}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

// TestNameAsDeclarative: metadata.name's format is a beta declarative rule
// on ReplicationController (+k8s:format=k8s-long-name,
// k8s.io/kubernetes@v1.37.2 pkg/apis/core/v1/zz_generated.validations.go):
// its error comes after the handwritten ones, before the declarative
// replicas and minReadySeconds errors, and generateName itself is not
// checked (upstream's ValidateObjectMetaWithOpts). testdata/declarative
// holds request bodies and kubectl's reports of kube-apiserver v1.37.2's
// answers (2026-11-27; the generated suffix written as "abcde").
func TestNameAsDeclarative(t *testing.T) {
	store, _, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	store.GenerateNameFunc = func(base string) string { return base + "abcde" }
	ctx := registrytest.Context("", "v1", "replicationcontrollers", "dv12-ns")
	registrytest.Goldens(t, "testdata/declarative", func(t *testing.T, body []byte) error {
		obj, _, err := scheme.Codecs.UniversalDecoder(corev1.SchemeGroupVersion).Decode(body, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = store.Create(ctx, obj, nil, &metav1.CreateOptions{})
		return err
	})
}
