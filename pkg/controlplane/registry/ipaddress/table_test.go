package ipaddress

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
	ip := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.10", CreationTimestamp: created},
		Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}},
	}
	cols, cells := row(t, ip)
	if diff := cmp.Diff([]string{"Name", "ParentRef"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"10.96.0.10", "services/kube-system/kube-dns"}, cells); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ip.Spec.ParentRef = &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "Gateways", Name: "gw"}
	if _, cells := row(t, ip); cells[1] != "gateways.gateway.networking.k8s.io/gw" {
		t.Errorf("cluster-scoped parent: %v", cells)
	}
}
