package mutatingwebhookconfiguration

import (
	"context"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTable: upstream's printers.go columns for webhook configurations:
// NAME WEBHOOKS AGE.
func TestTable(t *testing.T) {
	c := &arv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks", CreationTimestamp: metav1.NewTime(time.Now().Add(-2 * time.Minute))},
		Webhooks:   []arv1.MutatingWebhook{{Name: "a.example.com"}, {Name: "b.example.com"}},
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, col := range tbl.ColumnDefinitions {
		names = append(names, col.Name)
	}
	if got := strings.Join(names, ","); got != "Name,Webhooks,Age" {
		t.Errorf("columns %s", got)
	}
	if cells := tbl.Rows[0].Cells; cells[0] != "hooks" || cells[1] != int64(2) || cells[2] != "2m" {
		t.Errorf("cells %v", cells)
	}
}
