package validatingadmissionpolicy

import (
	"context"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTable: upstream's printers.go columns for
// validatingadmissionpolicies: NAME VALIDATIONS PARAMKIND AGE.
func TestTable(t *testing.T) {
	p := &arv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "max-keys", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Hour))},
		Spec: arv1.ValidatingAdmissionPolicySpec{
			ParamKind:   &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			Validations: []arv1.Validation{{Expression: "true"}, {Expression: "true"}},
		},
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	want := []any{"max-keys", int64(2), "v1/ConfigMap", "3h"}
	for i, w := range want {
		if tbl.Rows[0].Cells[i] != w {
			t.Errorf("%s = %#v, want %#v", names[i], tbl.Rows[0].Cells[i], w)
		}
	}
	p.Spec.ParamKind = nil
	tbl, _ = TableConvertor.ConvertToTable(context.Background(), p, nil)
	if tbl.Rows[0].Cells[2] != "<unset>" {
		t.Errorf("paramKind cell %v, want <unset>", tbl.Rows[0].Cells[2])
	}
}
