package csinode

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: created},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a"}, {Name: "b"}}}}
	cols, cells := row(t, n)
	if diff := cmp.Diff([]string{"Name", "Drivers", "Age"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"node-1", int64(2), "2d1h"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
