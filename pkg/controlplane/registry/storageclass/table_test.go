package storageclass

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Expected columns and cells are upstream's printers
// (kubernetes/kubernetes pkg/printers/internalversion/printers.go, v1.37).

var created = metav1.NewTime(time.Now().Add(-49 * time.Hour))

func row(t *testing.T, obj runtime.Object) (columns []string, cells []any) {
	t.Helper()
	tbl, err := TableConvertor.ConvertToTable(t.Context(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tbl.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	return columns, tbl.Rows[0].Cells
}

func TestTable(t *testing.T) {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard", CreationTimestamp: created}, Provisioner: "kubernetes.io/no-provisioner"}
	cols, cells := row(t, sc)
	if diff := cmp.Diff([]string{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"standard", "kubernetes.io/no-provisioner", "Delete", "Immediate", false, "2d1h"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
	sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	sc.AllowVolumeExpansion = ptr.To(true)
	if _, cells := row(t, sc); !cmp.Equal([]any{"standard (default)", "kubernetes.io/no-provisioner", "Retain", "WaitForFirstConsumer", true, "2d1h"}, cells) {
		t.Errorf("default class: %v", cells)
	}
	sc.Annotations = map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "true"}
	if !IsDefault(sc) {
		t.Error("the beta annotation marks a default class too")
	}
	sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "false"}
	if _, cells := row(t, sc); cells[0] != "standard" || IsDefault(sc) {
		t.Errorf("not default: %v", cells)
	}
}
