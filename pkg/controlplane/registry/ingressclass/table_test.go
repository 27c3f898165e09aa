package ingressclass

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
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
	ic := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "external-lb", CreationTimestamp: created},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress-controller",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"}},
	}
	cols, cells := row(t, ic)
	if diff := cmp.Diff([]string{"Name", "Controller", "Parameters", "Age"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"external-lb", "example.com/ingress-controller", "IngressParameters.k8s.example.com/external-lb", "2d1h"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ic.Spec.Parameters = nil
	if _, cells := row(t, ic); cells[2] != "<none>" {
		t.Errorf("no parameters: %v", cells)
	}
}
