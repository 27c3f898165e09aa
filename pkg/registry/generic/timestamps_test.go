package generic

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

func limitRange(cpu string, at time.Time, labels map[string]string) *corev1.LimitRange {
	t := metav1.NewTime(at)
	return &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns", Labels: labels, ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:limits":{}}}`)}},
		}},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
	}
}

// The outcomes of upstream's comparison, with the times put back only when
// they are the only change.
func TestCompareTimestamps(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	noMF := limitRange("1", t0, nil)
	noMF.ManagedFields = nil
	moreMF := limitRange("1", t1, nil)
	moreMF.ManagedFields = append(moreMF.ManagedFields, metav1.ManagedFieldsEntry{Manager: "other"})
	otherFields := limitRange("1", t1, nil)
	otherFields.ManagedFields[0].FieldsV1 = &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}
	for _, c := range []struct {
		name     string
		obj, old runtime.Object
		want     string
		wantTime time.Time
	}{
		{"no managed fields", noMF, noMF.DeepCopy(), "unequal_objects_fast", time.Time{}},
		{"an entry added", moreMF, limitRange("1", t0, nil), "unequal_objects_fast", t1},
		{"no time changed", limitRange("2", t0, nil), limitRange("1", t0, nil), "unequal_objects_fast", t0},
		{"entries differ beyond times", otherFields, limitRange("1", t0, nil), "unequal_objects_fast", t1},
		{"objects differ", limitRange("2", t1, nil), limitRange("1", t0, nil), "unequal_objects_slow", t1},
		{"only the time (1000m is 1)", limitRange("1000m", t1, nil), limitRange("1", t0, nil), "equal_objects", t0},
		{"a label", limitRange("1", t1, map[string]string{"a": "b"}), limitRange("1", t0, nil), "unequal_objects_slow", t1},
		{"no metadata", &metav1.Status{}, &metav1.Status{}, "error", time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			ctx := rest.WithTimestampComparisons(context.Background(), func(outcome string, d time.Duration) {
				if d < 0 {
					t.Errorf("duration %v", d)
				}
				got = append(got, outcome)
			})
			revertTimestampOnlyChanges(ctx, c.obj, c.old)
			if len(got) != 1 || got[0] != c.want {
				t.Fatalf("recorded %q, want [%q]", got, c.want)
			}
			if lr, ok := c.obj.(*corev1.LimitRange); ok && len(lr.ManagedFields) > 0 {
				if got := lr.ManagedFields[0].Time; !got.Time.Equal(c.wantTime) {
					t.Errorf("time afterwards %v, want %v", got, c.wantTime)
				}
			}
		})
	}
	// Without a recorder in the context nothing is recorded, and the
	// times are still put back.
	obj := limitRange("1000m", t1, nil)
	revertTimestampOnlyChanges(context.Background(), obj, limitRange("1", t0, nil))
	if !obj.ManagedFields[0].Time.Time.Equal(t0) {
		t.Errorf("without a recorder: time %v, want %v", obj.ManagedFields[0].Time, t0)
	}
}

// Unstructured objects: the managed fields compared without times, the rest
// strictly (nil differs from empty).
func TestCompareTimestampsUnstructured(t *testing.T) {
	mk := func(at string, spec any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "managedFields": []any{map[string]any{
				"manager": "m", "operation": "Update", "apiVersion": "example.com/v1", "time": at,
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}},
			"spec": spec,
		}}
	}
	outcome := func(obj, old *unstructured.Unstructured) string {
		var got string
		revertTimestampOnlyChanges(rest.WithTimestampComparisons(context.Background(), func(o string, _ time.Duration) { got = o }), obj, old)
		return got
	}
	obj := mk("2026-11-29T12:00:01Z", map[string]any{"a": int64(1)})
	if got := outcome(obj, mk("2026-11-29T12:00:00Z", map[string]any{"a": int64(1)})); got != "equal_objects" {
		t.Errorf("same spec: %q, want equal_objects", got)
	}
	if mf := obj.GetManagedFields(); mf[0].Time.UTC().Format(time.RFC3339) != "2026-11-29T12:00:00Z" {
		t.Errorf("time not put back: %v", mf[0].Time)
	}
	if got := outcome(mk("2026-11-29T12:00:01Z", map[string]any{"a": int64(2)}), mk("2026-11-29T12:00:00Z", map[string]any{"a": int64(1)})); got != "unequal_objects_slow" {
		t.Errorf("other spec: %q, want unequal_objects_slow", got)
	}
	if got := outcome(mk("2026-11-29T12:00:01Z", map[string]any{}), mk("2026-11-29T12:00:00Z", nil)); got != "unequal_objects_slow" {
		t.Errorf("empty vs nil spec: %q, want unequal_objects_slow", got)
	}
}

// The comparison's cost on its two common paths: no time changed (fast),
// and the same manager changing a value a second later (slow: the whole
// objects compared).
func BenchmarkCompareTimestamps(b *testing.B) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	old := limitRange("1", t0, map[string]string{"app": "x", "tier": "y"})
	for _, c := range []struct {
		name string
		obj  *corev1.LimitRange
	}{
		{"fast", limitRange("2", t0, map[string]string{"app": "x", "tier": "y"})},
		{"slow", limitRange("2", t0.Add(time.Second), map[string]string{"app": "x", "tier": "y"})},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				compareTimestamps(c.obj, old)
			}
		})
	}
}
