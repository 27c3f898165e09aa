package volumeattachment

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-1", CreationTimestamp: created},
		Spec:   storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	cols, cells := row(t, va)
	if diff := cmp.Diff([]string{"Name", "Attacher", "PV", "Node", "Attached", "Age"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"csi-1", "csi.example.com", "pv-1", "node-1", true, "2d1h"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	va.Spec.Source = storagev1.VolumeAttachmentSource{}
	if _, cells := row(t, va); cells[2] != "" {
		t.Errorf("inline: %v", cells)
	}
}
