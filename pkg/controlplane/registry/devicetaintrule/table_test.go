package devicetaintrule

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The expected columns were observed on kube-apiserver v1.37.2 built from
// the k8s.io/kubernetes v1.37.2 module (hack/build-reference.sh); the
// cells follow its printDeviceTaint.
func TestTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-49 * time.Hour))
	added := metav1.NewTime(time.Now().Add(-3 * time.Hour))
	rule := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-maintenance", CreationTimestamp: created},
		Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{
			Key: "example.com/maintenance", Value: "planned", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: &added}},
	}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), rule, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Key", "Value", "Effect", "TimeAdded", "Age"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"gpu-maintenance", "example.com/maintenance", "planned", "NoExecute", "3h", "2d1h"}, tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	rule.Spec.Taint.TimeAdded = nil
	if tbl, err = TableConvertor.ConvertToTable(t.Context(), rule, nil); err != nil {
		t.Fatal(err)
	}
	if got := tbl.Rows[0].Cells[4]; got != "" {
		t.Errorf("TimeAdded unset: cell %q, want empty", got)
	}
}
