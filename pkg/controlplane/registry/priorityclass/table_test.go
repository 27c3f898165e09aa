package priorityclass

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
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
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high", CreationTimestamp: created}, Value: 1000, GlobalDefault: true}
	cols, cells := row(t, pc)
	if diff := cmp.Diff([]string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"high", int64(1000), true, "2d1h", "<none>"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	pc.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	if _, cells := row(t, pc); cells[4] != "Never" {
		t.Errorf("policy: %v", cells)
	}
}
