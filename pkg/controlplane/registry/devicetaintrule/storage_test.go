package devicetaintrule

import (
	"context"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestRuleLifecycle: generation 1 on create and bumped by spec changes
// only, status cleared on create, kept by main-resource updates and
// written through /status (which keeps the spec), the default table.
func TestRuleLifecycle(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("resource.k8s.io", "v1", "devicetaintrules", "")
	in := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "broken-gpu"},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu.example.com")},
			Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule},
		},
		Status: resourcev1.DeviceTaintRuleStatus{Conditions: []metav1.Condition{{Type: "X", Status: "True", Reason: "R", LastTransitionTime: metav1.Now()}}},
	}
	out, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.(*resourcev1.DeviceTaintRule)
	if r.Generation != 1 || len(r.Status.Conditions) != 0 {
		t.Errorf("created: generation %d status %+v", r.Generation, r.Status)
	}
	out, _, err = store.Update(ctx, r.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*resourcev1.DeviceTaintRule).Labels = map[string]string{"a": "b"}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || out.(*resourcev1.DeviceTaintRule).Generation != 1 {
		t.Fatalf("label update: %v %+v", err, out)
	}
	out, _, err = store.Update(ctx, r.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*resourcev1.DeviceTaintRule).Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || out.(*resourcev1.DeviceTaintRule).Generation != 2 {
		t.Fatalf("spec update: %v %+v", err, out)
	}
	_, _, err = store.Update(ctx, r.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*resourcev1.DeviceTaintRule).Spec.Taint.Effect = "Evict"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueNotSupported spec.taint.effect" {
		t.Errorf("bad effect: %s", got)
	}
	out, _, err = status.Update(ctx, r.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		r := o.(*resourcev1.DeviceTaintRule)
		r.Status.Conditions = []metav1.Condition{{Type: resourcev1.DeviceTaintConditionEvictionInProgress, Status: "False", Reason: "NoPods", LastTransitionTime: metav1.Now()}}
		r.Spec.Taint.Key = "ignored"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r = out.(*resourcev1.DeviceTaintRule)
	if len(r.Status.Conditions) != 1 || r.Spec.Taint.Key != "example.com/broken" || r.Generation != 2 {
		t.Errorf("status update: %+v", r)
	}
	tbl, err := store.ConvertToTable(context.Background(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The store serves the table of TableConvertor (see TestTable).
	if len(tbl.ColumnDefinitions) != 6 || tbl.ColumnDefinitions[1].Name != "Key" || tbl.Rows[0].Cells[0] != "broken-gpu" ||
		tbl.Rows[0].Cells[1] != "example.com/broken" {
		t.Errorf("table %+v", tbl)
	}
}
