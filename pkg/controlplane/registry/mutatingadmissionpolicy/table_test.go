package mutatingadmissionpolicy

import (
	"context"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTable: upstream's printers.go columns for mutatingadmissionpolicies
// (printMutatingAdmissionPolicy): NAME MUTATIONS PARAMKIND AGE.
func TestTable(t *testing.T) {
	p := &arv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "sidecar", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Hour))},
		Spec: arv1.MutatingAdmissionPolicySpec{
			ParamKind: &arv1.ParamKind{APIVersion: "mutations.example.com/v1", Kind: "Sidecar"},
			Mutations: []arv1.Mutation{{PatchType: arv1.PatchTypeJSONPatch}},
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
	if got := names; len(got) != 4 || got[0] != "Name" || got[1] != "Mutations" || got[2] != "ParamKind" || got[3] != "Age" {
		t.Errorf("columns %v", got)
	}
	want := []any{"sidecar", int64(1), "mutations.example.com/v1/Sidecar", "3h"}
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
