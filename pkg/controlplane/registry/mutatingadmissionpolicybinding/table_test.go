package mutatingadmissionpolicybinding

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTable: upstream's printers.go columns for
// mutatingadmissionpolicybindings (printMutatingAdmissionPolicyBinding):
// NAME POLICYNAME PARAMREF AGE, the paramRef as namespace/name, */name,
// its selector or <unset>.
func TestTable(t *testing.T) {
	for _, tc := range []struct {
		ref  *arv1.ParamRef
		want string
	}{
		{nil, "<unset>"},
		{&arv1.ParamRef{Name: "p", Namespace: "ns"}, "ns/p"},
		{&arv1.ParamRef{Name: "p"}, "*/p"},
		{&arv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}, "a=b"},
	} {
		b := &arv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "pol", ParamRef: tc.ref}}
		tbl, err := TableConvertor.ConvertToTable(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := tbl.Rows[0].Cells; c[0] != "b" || c[1] != "pol" || c[2] != tc.want {
			t.Errorf("cells %v, want paramRef %q", c, tc.want)
		}
		if n := tbl.ColumnDefinitions[2].Name; n != "ParamRef" {
			t.Errorf("column %s", n)
		}
	}
}
