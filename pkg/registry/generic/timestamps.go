package generic

import (
	"context"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// timestampEqualities are semantic equality with managed fields entries
// compared without their times, for typed objects and (their managed
// fields, then the rest of the object) for unstructured ones.
var timestampEqualities = sync.OnceValue(func() conversion.Equalities {
	eq := equality.Semantic.Copy()
	if err := eq.AddFuncs(
		func(a, b metav1.ManagedFieldsEntry) bool {
			a.Time, b.Time = nil, nil
			return reflect.DeepEqual(a, b)
		},
		func(a, b unstructured.Unstructured) bool {
			return eq.DeepEqual(a.GetManagedFields(), b.GetManagedFields()) &&
				equalBesides(eq, a.Object, b.Object, "metadata", "managedFields")
		},
	); err != nil {
		panic(err)
	}
	return eq
})

// equalBesides compares a and b but for the value at path (a path into
// nested maps; what is not a map there is not compared).
func equalBesides(eq conversion.Equalities, a, b any, path ...string) bool {
	if len(path) == 0 {
		return true
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return true
	}
	if len(am) != len(bm) {
		return false
	}
	for k, av := range am {
		bv, ok := bm[k]
		switch {
		case !ok:
			return false
		case k == path[0]:
			if !equalBesides(eq, av, bv, path[1:]...) {
				return false
			}
		case !eq.DeepEqual(av, bv):
			return false
		}
	}
	return true
}

// revertTimestampOnlyChanges puts back the stored managed fields times in
// an update's object when they are all it changes, so that the write is a
// no-op rather than a new resourceVersion, and records how the comparison
// went in ctx's recorder (rest.WithTimestampComparisons), as upstream's
// update does after the strategy's preparation and validation, before
// validating admission: the outcome is "fast" unless the entries are the
// same but for at least one time; then "equal" (times put back) if the
// objects are the same but for those times, "slow" otherwise.
func revertTimestampOnlyChanges(ctx context.Context, obj, old runtime.Object) {
	start := time.Now()
	outcome := compareTimestamps(obj, old)
	rest.TimestampsCompared(ctx, outcome, time.Since(start))
}

func compareTimestamps(obj, old runtime.Object) string {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if uo, ok := old.(*unstructured.Unstructured); ok {
			if outcome, ok := compareUnstructuredTimestamps(u.Object, uo.Object); ok {
				return outcome
			}
		}
	}
	return compareTypedTimestamps(obj, old)
}

// compareTypedTimestamps is the comparison as upstream makes it, on the
// objects' managed fields entries (for unstructured objects, decoded from
// their maps).
func compareTypedTimestamps(obj, old runtime.Object) string {
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return metrics.TimestampsError
	}
	newMeta, err := meta.Accessor(obj)
	if err != nil {
		return metrics.TimestampsError
	}
	oldMF, newMF := oldMeta.GetManagedFields(), newMeta.GetManagedFields()
	if len(newMF) == 0 || len(newMF) != len(oldMF) {
		return metrics.TimestampsUnequalFast
	}
	changed := false
	for i := range newMF {
		if !newMF[i].Time.Equal(oldMF[i].Time) {
			changed = true
			break
		}
	}
	if !changed {
		return metrics.TimestampsUnequalFast
	}
	eq := timestampEqualities()
	equal := eq.DeepEqual
	if _, ok := obj.(*unstructured.Unstructured); ok {
		equal = eq.DeepEqualWithNilDifferentFromEmpty
	}
	if !equal(oldMF, newMF) {
		return metrics.TimestampsUnequalFast
	}
	if !equal(obj, old) {
		return metrics.TimestampsUnequalSlow
	}
	for i := range newMF {
		newMF[i].Time = oldMF[i].Time
	}
	newMeta.SetManagedFields(newMF)
	return metrics.TimestampsEqual
}
