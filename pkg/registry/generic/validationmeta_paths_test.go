package generic

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// randomMeta is metadata with each field drawn from valid, invalid and
// absent values.
func randomMeta(r *rand.Rand) *metav1.ObjectMeta {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	t1 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	times := []metav1.Time{{}, {Time: t1}, {Time: t1.In(time.FixedZone("x", 3600))}, {Time: t1.Add(time.Second)}}
	m := &metav1.ObjectMeta{
		GenerateName:    pick("", "", "thing-", "Bad_"),
		Name:            pick("", "a", "a", "Bad_Name", "b"),
		Namespace:       pick("", "ns", "ns", "Bad NS", "other"),
		Generation:      []int64{-1, 0, 1, 1, 5}[r.IntN(5)],
		ResourceVersion: pick("", "5", "5"),
		UID:             types.UID(pick("", "u1", "u1", "u2")),
	}
	m.CreationTimestamp = times[r.IntN(len(times))]
	if r.IntN(3) == 0 {
		t := times[1+r.IntN(len(times)-1)]
		m.DeletionTimestamp = &t
	}
	if r.IntN(3) == 0 {
		s := []int64{0, 30}[r.IntN(2)]
		m.DeletionGracePeriodSeconds = &s
	}
	// One entry at most per map: the validators report a map's errors
	// in its iteration order.
	switch r.IntN(4) {
	case 1:
		m.Labels = map[string]string{"app": "x"}
	case 2:
		m.Labels = map[string]string{"bad key!": "x"}
	case 3:
		m.Labels = map[string]string{"app": "bad value!"}
	}
	switch r.IntN(3) {
	case 1:
		m.Annotations = map[string]string{"a.b/c": "anything"}
	case 2:
		m.Annotations = map[string]string{"bad key!": "x"}
	}
	switch r.IntN(3) {
	case 1:
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u"}}
	case 2:
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p"}}
	}
	switch r.IntN(4) {
	case 1:
		m.Finalizers = []string{"example.com/f"}
	case 2:
		m.Finalizers = []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}
	case 3:
		m.Finalizers = []string{"bad finalizer!", "example.com/g"}
	}
	switch r.IntN(3) {
	case 1:
		m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1"}}
	case 2:
		m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Bad", FieldsType: "Other"}}
	}
	return m
}

// TestValidateObjectMetaAsUpstream checks validateObjectMeta and
// validateObjectMetaUpdate against apimachinery's validators they stand
// for, on random metadata, typed and unstructured, the same errors in the
// same order.
func TestValidateObjectMetaAsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 18))
	path := field.NewPath("metadata")
	asUnstructured := func(m *metav1.ObjectMeta) metav1.Object {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": content}}
	}
	var withUpdateErrs int
	for i := range 1500 {
		m, old := randomMeta(r), randomMeta(r)
		if r.IntN(2) == 0 {
			// The old metadata as the new, but for a few fields.
			other := old
			old = m.DeepCopy()
			for f := range reflect.ValueOf(old).Elem().NumField() {
				if r.IntN(4) == 0 {
					reflect.ValueOf(old).Elem().Field(f).Set(reflect.ValueOf(other).Elem().Field(f))
				}
			}
		}
		var nm, om metav1.Object = m, old
		if i%2 == 1 {
			nm, om = asUnstructured(m), asUnstructured(old)
		}
		namespaced := r.IntN(2) == 0
		got := validateObjectMeta(&validationMeta{Object: nm}, namespaced, validation.NameIsDNSSubdomain)
		want := validation.ValidateObjectMetaAccessor(nm, namespaced, validation.NameIsDNSSubdomain, path)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("validateObjectMeta(%+v, %v) =\n%v\nwant\n%v", m, namespaced, got, want)
		}
		got = validateObjectMetaUpdate(&validationMeta{Object: nm}, om)
		want = validation.ValidateObjectMetaAccessorUpdate(nm, om, path)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("validateObjectMetaUpdate(%+v, %+v) =\n%v\nwant\n%v", m, old, got, want)
		}
		if len(want) > 0 {
			withUpdateErrs++
		}
	}
	// Both the valid and the invalid cases were drawn.
	if withUpdateErrs == 0 || withUpdateErrs == 1500 {
		t.Fatalf("%d of 1500 updates with errors", withUpdateErrs)
	}
	// The same metadata again (old = new): no update error but those of
	// the new metadata alone.
	m := &metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "1", UID: "u", Generation: 2,
		CreationTimestamp: metav1.Time{Time: time.Unix(1e9, 0)}}
	if errs := validateObjectMetaUpdate(m, m.DeepCopy()); len(errs) != 0 {
		t.Errorf("unchanged metadata: %v", errs)
	}
}
