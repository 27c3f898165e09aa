package fieldmanager

import (
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
)

var _ handlers.RepeatedCreateFieldManager = (*Manager)(nil)

// repeatedKey names one create of the process's repeated creates: the
// (sub)resource's kind, the manager, the object.
type repeatedKey struct {
	kind                 schema.GroupVersionKind
	subresource, manager string
	namespace, name      string
	// reset is the (sub)resource's reset fields, printed (the strategy's,
	// the same for every server; part of the key all the same).
	reset string
}

// repeatedEntry is what a create computed: the object it was given (no
// managedFields, read-only) and the one entry it recorded (Time nil).
type repeatedEntry struct {
	in    runtime.Object
	entry metav1.ManagedFieldsEntry
}

// repeatedCreates holds, for the whole process, the managed fields of the
// creates marked with handlers.WithRepeatedCreate: each server of a test
// process makes its ~140 RBAC bootstrap objects alike, and the managed
// fields of a create are a function of the object, the manager and the
// (sub)resource's schema only (its time aside). An entry is written once
// (the first create of its key) and read-only afterwards; the marked
// creates are a fixed set, so it does not grow with use. Only managers on
// the process-wide TypeConverter of built-in kinds use it (the schema is
// then the same for every server).
var repeatedCreates sync.Map // repeatedKey -> *repeatedEntry

// UpdateRepeatedCreate implements handlers.RepeatedCreateFieldManager.
// A create whose object is exactly (reflect.DeepEqual) the one an earlier
// create of the same key was given gets that create's managed-fields
// entry with the current time, as UpdateNoErrors would record it
// (managedfields' managedFieldsUpdater: time.Now().UTC()). Anything else
// (a live object that is not empty, managedFields in the request, another
// object under the same name, a manager whose schema is not the shared
// one) takes UpdateNoErrors, and the first create of a key records its
// result only when UpdateNoErrors changed nothing but managedFields and
// recorded one Update entry.
func (m *Manager) UpdateRepeatedCreate(liveObj, newObj runtime.Object, manager string) runtime.Object {
	if !m.sharedSchema || !emptyObject(liveObj) {
		return m.UpdateNoErrors(liveObj, newObj, manager)
	}
	acc, err := meta.Accessor(newObj)
	if err != nil || acc.GetManagedFields() != nil {
		return m.UpdateNoErrors(liveObj, newObj, manager)
	}
	key := repeatedKey{kind: m.kind, subresource: m.subresource, reset: m.resetKey(), manager: manager, namespace: acc.GetNamespace(), name: acc.GetName()}
	if v, ok := repeatedCreates.Load(key); ok {
		e := v.(*repeatedEntry)
		if !reflect.DeepEqual(e.in, newObj) {
			return m.UpdateNoErrors(liveObj, newObj, manager)
		}
		entry := *e.entry.DeepCopy()
		entry.Time = &metav1.Time{Time: time.Now().UTC()}
		acc.SetManagedFields([]metav1.ManagedFieldsEntry{entry})
		return newObj
	}
	in := newObj.DeepCopyObject()
	out := m.UpdateNoErrors(liveObj, newObj, manager)
	outAcc, err := meta.Accessor(out)
	if err != nil {
		return out
	}
	mf := outAcc.GetManagedFields()
	if len(mf) != 1 || mf[0].Manager != manager || mf[0].Operation != metav1.ManagedFieldsOperationUpdate || mf[0].Time == nil || mf[0].Subresource != m.subresource {
		return out
	}
	check := out.DeepCopyObject()
	checkAcc, err := meta.Accessor(check)
	if err != nil {
		return out
	}
	checkAcc.SetManagedFields(nil)
	if !reflect.DeepEqual(check, in) {
		return out
	}
	entry := *mf[0].DeepCopy()
	entry.Time = nil
	repeatedCreates.LoadOrStore(key, &repeatedEntry{in: in, entry: entry})
	return out
}

// emptyObject tells whether obj is the zero value of its type (the live
// object of a create).
func emptyObject(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().IsZero()
}

// RepeatedCreates is the number of repeated creates whose managed fields
// the process holds (for tests and diagnostics).
func RepeatedCreates() int {
	n := 0
	repeatedCreates.Range(func(any, any) bool { n++; return true })
	return n
}
