package servicecidr

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
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
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", CreationTimestamp: created},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00::/108"}}}
	cols, cells := row(t, sc)
	if diff := cmp.Diff([]string{"Name", "CIDRs", "Age"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"kubernetes", "10.96.0.0/12,fd00::/108", "2d1h"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
