package persistentvolume

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func volume(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/data"}},
		},
	}
}

func TestPersistentVolumeStore(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	clock := t0
	now = func() metav1.Time { return clock }
	t.Cleanup(func() { now = metav1.Now })

	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "persistentvolumes", "")
	if store.NamespaceScoped() || !slices.Equal(store.ShortNames(), []string{"pv"}) {
		t.Errorf("got namespaced %t, short names %v; want cluster-scoped, [pv]", store.NamespaceScoped(), store.ShortNames())
	}
	// The status is reset: phase Pending, transitioned now.
	pv := volume("task-pv-volume")
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, Message: "set by a client"}
	obj, err := store.Create(ctx, pv, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	created := obj.(*corev1.PersistentVolume)
	if created.Status.Phase != corev1.VolumePending || created.Status.Message != "" ||
		created.Status.LastPhaseTransitionTime == nil || !created.Status.LastPhaseTransitionTime.Equal(&t0) {
		t.Errorf("got status %+v, want phase Pending transitioned at %v", created.Status, t0)
	}
	// /status: a phase change records its time; no change keeps it.
	clock = metav1.NewTime(t0.Add(time.Minute))
	upd := created.DeepCopy()
	upd.Status.Phase = corev1.VolumeAvailable
	upd.Status.LastPhaseTransitionTime = nil
	upd.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	obj, _, err = status.Update(ctx, pv.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	got := obj.(*corev1.PersistentVolume)
	if got.Status.Phase != corev1.VolumeAvailable || !got.Status.LastPhaseTransitionTime.Equal(&clock) ||
		got.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("got phase %s at %v, policy %s; want Available at %v, spec kept", got.Status.Phase,
			got.Status.LastPhaseTransitionTime, got.Spec.PersistentVolumeReclaimPolicy, clock)
	}
	transitioned := clock
	clock = metav1.NewTime(t0.Add(time.Hour))
	upd = got.DeepCopy()
	upd.Status.Message = "still available"
	upd.Status.LastPhaseTransitionTime = nil
	obj, _, err = status.Update(ctx, pv.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	if got := obj.(*corev1.PersistentVolume); !got.Status.LastPhaseTransitionTime.Equal(&transitioned) {
		t.Errorf("got transition time %v, want %v kept (phase unchanged)", got.Status.LastPhaseTransitionTime, transitioned)
	}
	// The main resource keeps the status; the source is immutable.
	upd = obj.(*corev1.PersistentVolume).DeepCopy()
	upd.Status.Phase = corev1.VolumeFailed
	upd.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	obj, _, err = store.Update(ctx, pv.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if got := obj.(*corev1.PersistentVolume); got.Status.Phase != corev1.VolumeAvailable || got.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("got phase %s, policy %s; want status kept, spec changed", got.Status.Phase, got.Spec.PersistentVolumeReclaimPolicy)
	}
	upd = obj.(*corev1.PersistentVolume).DeepCopy()
	upd.Spec.HostPath.Path = "/mnt/other"
	_, _, err = store.Update(ctx, pv.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueForbidden spec.persistentvolumesource"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	// Warnings.
	w := &registrytest.Warnings{}
	rbd := volume("rbd")
	rbd.Spec.HostPath = nil
	rbd.Spec.RBD = &corev1.RBDPersistentVolumeSource{CephMonitors: []string{"10.0.0.1:6789"}, RBDImage: "foo"}
	if _, err := store.Create(warning.WithRecorder(ctx, w), rbd, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := w.List(), []string{"spec.rbd: deprecated in v1.28, non-functional in v1.31+"}; !slices.Equal(got, want) {
		t.Errorf("got warnings %v, want %v", got, want)
	}
}

func TestPersistentVolumeTable(t *testing.T) {
	pv := volume("task-pv-volume")
	pv.CreationTimestamp = metav1.NewTime(time.Now().Add(-90 * time.Second))
	pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce}
	pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "task-pv-claim"}
	pv.Spec.StorageClassName = "manual"
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	pv.Status.Phase = corev1.VolumeBound
	annotated := volume("old")
	annotated.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "slow"}
	annotated.Spec.StorageClassName = "fast"
	annotated.Spec.VolumeAttributesClassName = ptr.To("gold")
	annotated.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), &corev1.PersistentVolumeList{Items: []corev1.PersistentVolume{*pv, *annotated}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printPersistentVolume columns (pkg/printers/internalversion/printers.go).
	if want := []string{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode"}; !slices.Equal(names, want) {
		t.Errorf("got columns %v, want %v", names, want)
	}
	want := [][]any{
		{"task-pv-volume", "10Gi", "RWO,RWX", "Retain", "Bound", "default/task-pv-claim", "manual", "<unset>", "", "90s", "Filesystem"},
		{"old", "10Gi", "RWO", "Retain", "Terminating", "", "slow", "gold", "", "<unknown>", "<unset>"},
	}
	for i, row := range tbl.Rows {
		if !slices.Equal(row.Cells, want[i]) {
			t.Errorf("row %d: got %v, want %v", i, row.Cells, want[i])
		}
	}
}
