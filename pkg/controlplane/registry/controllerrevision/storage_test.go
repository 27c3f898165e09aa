package controllerrevision

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestControllerRevisionStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("apps", "v1", "controllerrevisions", "default")
	if got := store.ShortNames(); len(got) != 0 {
		t.Errorf("got short names %v, want none", got)
	}
	_, err = store.Create(ctx, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Revision: -1}, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueRequired data", "FieldValueInvalid revision"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	obj, err := store.Create(ctx, &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)},
		Revision:   1,
	}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := obj.(*appsv1.ControllerRevision)
	upd := r.DeepCopy()
	upd.Data.Raw = []byte(`{"spec":{"template":{"x":1}}}`)
	_, _, err = store.Update(ctx, "r", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid data"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	upd = r.DeepCopy()
	upd.Revision = 2
	if _, _, err := store.Update(ctx, "r", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Errorf("changing the revision number: %v", err)
	}
}

// Upstream's printControllerRevision (printers.go, v1.37).
func TestControllerRevisionTable(t *testing.T) {
	yes := true
	r := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-6d4cf56db6", CreationTimestamp: metav1.NewTime(time.Now().Add(-5 * time.Minute)),
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Pod", Name: "not-the-controller"},
				{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", Controller: &yes},
			},
		},
		Revision: 3,
	}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type)
	}
	if want := []string{"Name:string", "Controller:string", "Revision:string", "Age:string"}; !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"web-6d4cf56db6", "statefulset.apps/web", int64(3), "5m"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
	r.OwnerReferences = nil
	tbl, _ = TableConvertor.ConvertToTable(t.Context(), r, nil)
	if got := tbl.Rows[0].Cells[1]; got != "<none>" {
		t.Errorf("got controller %v without one, want <none>", got)
	}
}
