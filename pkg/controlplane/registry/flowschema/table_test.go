package flowschema

import (
	"context"
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTableOrdersByPrecedence: a list's rows come by matching precedence,
// then name, as upstream's printFlowSchemaList (kube-apiserver v1.37.2's
// `kubectl get flowschemas` lists exempt (1), probes (2), ...,
// catch-all (10000), not by name).
func TestTableOrdersByPrecedence(t *testing.T) {
	fs := func(name string, precedence int32) flowcontrolv1.FlowSchema {
		return flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence}}
	}
	list := &flowcontrolv1.FlowSchemaList{Items: []flowcontrolv1.FlowSchema{fs("catch-all", 10000), fs("b", 500), fs("exempt", 1), fs("a", 500)}}
	table, err := TableConvertor.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range table.Rows {
		got = append(got, r.Cells[0].(string))
	}
	if want := []string{"exempt", "a", "b", "catch-all"}; !slices.Equal(got, want) {
		t.Errorf("got rows %q, want %q", got, want)
	}
	if list.Items[0].Name != "catch-all" {
		t.Errorf("the list itself was reordered: %q first", list.Items[0].Name)
	}
}
