package table

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var podNames = Convertor{
	Columns: []metav1.TableColumnDefinition{NameColumn},
	Row: func(obj runtime.Object) ([]any, bool) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, false
		}
		return []any{p.Name}, true
	},
}

func TestConvertor(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "3"}}
	tbl, err := podNames.ConvertToTable(t.Context(), pod, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.ResourceVersion != "3" || len(tbl.Rows) != 1 || tbl.Rows[0].Object.Object != pod || len(tbl.ColumnDefinitions) != 1 {
		t.Errorf("got %+v, want one row carrying the pod, its resourceVersion and the columns", tbl)
	}
	remaining := int64(4)
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "next", RemainingItemCount: &remaining}}
	tbl, err = podNames.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.ResourceVersion != "9" || tbl.Continue != "next" || tbl.RemainingItemCount == nil || *tbl.RemainingItemCount != 4 {
		t.Errorf("got list meta %+v, want the list's", tbl.ListMeta)
	}

	_, err = podNames.ConvertToTable(t.Context(), &corev1.ConfigMap{}, nil)
	if !apierrors.IsNotAcceptable(err) {
		t.Errorf("got %v for another kind, want NotAcceptable", err)
	}
	_, err = podNames.ConvertToTable(t.Context(), pod, &metav1.ListOptions{})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("got %v for bad table options, want BadRequest", err)
	}
}

func TestSince(t *testing.T) {
	if got := Since(metav1.Time{}); got != "<unknown>" {
		t.Errorf("got %q, want <unknown>", got)
	}
	if got := Since(metav1.NewTime(time.Now().Add(-3 * 24 * time.Hour))); got != "3d" {
		t.Errorf("got %q, want 3d", got)
	}
	if got := SinceMicro(metav1.NewMicroTime(time.Now().Add(-7 * time.Minute))); got != "7m" {
		t.Errorf("got %q, want 7m", got)
	}
}
