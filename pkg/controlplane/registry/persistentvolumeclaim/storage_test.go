package persistentvolumeclaim

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func claim(name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("manual"),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}},
		},
	}
}

func TestPersistentVolumeClaimStore(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "persistentvolumeclaims", "default")
	if !store.NamespaceScoped() || !slices.Equal(store.ShortNames(), []string{"pvc"}) {
		t.Errorf("got namespaced %t, short names %v; want namespaced, [pvc]", store.NamespaceScoped(), store.ShortNames())
	}
	// The status is cleared (decoding the stored claim defaults its
	// phase to Pending), the data source mirrored into dataSourceRef.
	c := claim("task-pv-claim")
	c.Status.Phase = corev1.ClaimBound
	c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "origin"}
	obj, err := store.Create(ctx, c, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	created := obj.(*corev1.PersistentVolumeClaim)
	if created.Status.Phase != corev1.ClaimPending {
		t.Errorf("got phase %q, want Pending", created.Status.Phase)
	}
	if ref := created.Spec.DataSourceRef; ref == nil || ref.Kind != "PersistentVolumeClaim" || ref.Name != "origin" || ref.APIGroup != nil {
		t.Errorf("got dataSourceRef %+v, want the dataSource's", ref)
	}
	// A legacy dataSource of another core kind is dropped.
	legacy := claim("legacy")
	legacy.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Pod", Name: "p"}
	obj, err = store.Create(ctx, legacy, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := obj.(*corev1.PersistentVolumeClaim); got.Spec.DataSource != nil || got.Spec.DataSourceRef != nil {
		t.Errorf("got data sources %v / %v, want the Pod dataSource dropped", got.Spec.DataSource, got.Spec.DataSourceRef)
	}
	// The spec is immutable but for volumeName (once).
	upd := created.DeepCopy()
	upd.Spec.VolumeName = "task-pv-volume"
	obj, _, err = store.Update(ctx, c.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("bind: %v", err)
	}
	upd = obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	upd.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	_, _, err = store.Update(ctx, c.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueForbidden spec"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	// /status changes the status only.
	upd = obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	upd.Status = corev1.PersistentVolumeClaimStatus{
		Phase:       corev1.ClaimBound,
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
	}
	upd.Spec.VolumeName = "other"
	// kube-apiserver v1.37.2 (probed 2026-11-28, CSIVolumeHealth off by
	// default): a status write's healthStatus is dropped.
	upd.Status.HealthStatus = &corev1.VolumeHealthStatus{LastTransitionTime: metav1.Now()}
	obj, _, err = status.Update(ctx, c.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	if got := obj.(*corev1.PersistentVolumeClaim); got.Status.Phase != corev1.ClaimBound || got.Spec.VolumeName != "task-pv-volume" || got.Status.HealthStatus != nil {
		t.Errorf("got phase %s, volume %q, healthStatus %v; want Bound, spec kept, no healthStatus", got.Status.Phase, got.Spec.VolumeName, got.Status.HealthStatus)
	}
	// A bound claim may grow.
	upd = obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	upd.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("20Gi")
	if _, _, err = store.Update(ctx, c.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Errorf("grow a bound claim: %v", err)
	}
}

func TestPersistentVolumeClaimTable(t *testing.T) {
	bound := claim("data")
	bound.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Minute))
	bound.Spec.VolumeName = "pv-1"
	bound.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	bound.Status = corev1.PersistentVolumeClaimStatus{
		Phase:       corev1.ClaimBound,
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
	}
	pending := claim("pending")
	pending.Spec.StorageClassName = nil
	pending.Status.Phase = corev1.ClaimPending
	tbl, err := TableConvertor.ConvertToTable(t.Context(), &corev1.PersistentVolumeClaimList{Items: []corev1.PersistentVolumeClaim{*bound, *pending}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printPersistentVolumeClaim columns (pkg/printers/internalversion/printers.go).
	if want := []string{"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"}; !slices.Equal(names, want) {
		t.Errorf("got columns %v, want %v", names, want)
	}
	want := [][]any{
		{"data", "Bound", "pv-1", "5Gi", "RWOP", "manual", "<unset>", "2m", "Block"},
		{"pending", "Pending", "", "", "", "", "<unset>", "<unknown>", "<unset>"},
	}
	for i, row := range tbl.Rows {
		if !slices.Equal(row.Cells, want[i]) {
			t.Errorf("row %d: got %v, want %v", i, row.Cells, want[i])
		}
	}
}
