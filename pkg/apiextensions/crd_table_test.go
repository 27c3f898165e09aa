package apiextensions

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The expected columns (names, types, priorities) were observed on
// kube-apiserver v1.37.2 built from the k8s.io/kubernetes v1.37.2 module
// (hack/build-reference.sh); the cells follow apiextensions-apiserver
// v0.37.2's CRD table convertor.
func TestCRDTable(t *testing.T) {
	created := time.Date(2026, 11, 26, 10, 0, 0, 0, time.FixedZone("x", 3600))
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", CreationTimestamp: metav1.NewTime(created)},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ShortNames: []string{"wd", "wdg"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v2", Served: true}, {Name: "v1", Served: true, Storage: true}, {Name: "v0", Served: false},
			},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
			{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
		}},
	}
	tbl, err := crdTable.ConvertToTable(t.Context(), crd, nil)
	if err != nil {
		t.Fatal(err)
	}
	type col struct {
		Name, Type string
		Priority   int32
	}
	var cols []col
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, col{c.Name, c.Type, c.Priority})
	}
	want := []col{{"Name", "string", 0}, {"Scope", "string", 0}, {"Versions", "string", 0}, {"Created At", "date", 0},
		{"Group", "string", 1}, {"Kind", "string", 1}, {"ShortNames", "string", 1}, {"Established", "boolean", 1}}
	if diff := cmp.Diff(want, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"widgets.example.com", "Namespaced", "v1(storage),v2", "2026-11-26T09:00:00Z", "example.com", "Widget", "wd,wdg", true},
		tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	crd.Status.Conditions = nil
	if tbl, err = crdTable.ConvertToTable(t.Context(), crd, nil); err != nil {
		t.Fatal(err)
	}
	if got := tbl.Rows[0].Cells[7]; got != false {
		t.Errorf("not established: cell %v, want false", got)
	}
}
