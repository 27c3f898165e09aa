package fieldmanager

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var clusterRoleKind = rbacv1.SchemeGroupVersion.WithKind("ClusterRole")

func clusterRole(name string, verbs ...string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"},
			Annotations: map[string]string{"rbac.authorization.kubernetes.io/autoupdate": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: verbs, APIGroups: []string{""}, Resources: []string{"pods", "services"}}},
	}
}

// withoutTimes is obj's managedFields with their times removed.
func withoutTimes(t *testing.T, obj runtime.Object) []metav1.ManagedFieldsEntry {
	t.Helper()
	mf := obj.(metav1.Object).GetManagedFields()
	out := make([]metav1.ManagedFieldsEntry, len(mf))
	for i, e := range mf {
		if e.Time == nil {
			t.Fatalf("managed fields entry %d has no time", i)
		}
		e.Time = nil
		out[i] = e
	}
	return out
}

// TestUpdateRepeatedCreateIsUpdateNoErrors checks that a repeated create
// (two servers' managers, one after the other) records what UpdateNoErrors
// records, that the second takes the first's entry, and that anything
// that is not the same create is computed afresh.
func TestUpdateRepeatedCreateIsUpdateNoErrors(t *testing.T) {
	t.Parallel()
	const name, manager = "repeated-create-test", "kapi-test/v0"
	first := newManager(t, Config{Kind: clusterRoleKind})
	second := newManager(t, Config{Kind: clusterRoleKind})

	want := first.UpdateNoErrors(&rbacv1.ClusterRole{}, clusterRole(name, "get"), manager)
	got1 := first.UpdateRepeatedCreate(&rbacv1.ClusterRole{}, clusterRole(name, "get"), manager)
	got2 := second.UpdateRepeatedCreate(&rbacv1.ClusterRole{}, clusterRole(name, "get"), manager)
	for i, got := range []runtime.Object{got1, got2} {
		if !reflect.DeepEqual(withoutTimes(t, got), withoutTimes(t, want)) {
			t.Errorf("create %d: managed fields %+v, want %+v", i+1, withoutTimes(t, got), withoutTimes(t, want))
		}
		g := got.DeepCopyObject().(*rbacv1.ClusterRole)
		g.ManagedFields = nil
		if !reflect.DeepEqual(g, clusterRole(name, "get")) {
			t.Errorf("create %d changed more than managedFields: %+v", i+1, g)
		}
	}

	key := repeatedKey{kind: clusterRoleKind, manager: manager, name: name}
	v, ok := repeatedCreates.Load(key)
	if !ok {
		t.Fatalf("no entry recorded for %+v", key)
	}
	// The second server's create of the same object takes the recorded
	// entry: doctor it under another manager name and see it come back.
	doctored := *v.(*repeatedEntry)
	doctored.entry.Manager = "doctored"
	dkey := key
	dkey.manager = "doctored"
	repeatedCreates.Store(dkey, &doctored)
	got := second.UpdateRepeatedCreate(&rbacv1.ClusterRole{}, clusterRole(name, "get"), "doctored")
	if mf := got.(*rbacv1.ClusterRole).ManagedFields; len(mf) != 1 || !reflect.DeepEqual(mf[0].FieldsV1, doctored.entry.FieldsV1) || mf[0].Time == nil {
		t.Fatalf("repeated create got managed fields %+v, want the recorded entry with a time", mf)
	}

	// Not the same create: another object under the recorded name, a live
	// object that is not empty, managed fields in the request.
	// (rules are atomic: another label makes other managed fields.)
	otherObj := clusterRole(name, "get")
	otherObj.Labels["other"] = "yes"
	other := second.UpdateRepeatedCreate(&rbacv1.ClusterRole{}, otherObj.DeepCopy(), manager)
	wantOther := second.UpdateNoErrors(&rbacv1.ClusterRole{}, otherObj.DeepCopy(), manager)
	if !reflect.DeepEqual(withoutTimes(t, other), withoutTimes(t, wantOther)) {
		t.Errorf("other object under the same name: managed fields %+v, want %+v", withoutTimes(t, other), withoutTimes(t, wantOther))
	}
	if reflect.DeepEqual(withoutTimes(t, other), withoutTimes(t, want)) {
		t.Errorf("other object under the same name got the recorded object's managed fields")
	}
	live := stored(clusterRole(name, "get"))
	upd := clusterRole(name, "get", "list")
	gotUpd := second.UpdateRepeatedCreate(live.DeepCopyObject(), upd.DeepCopy(), manager)
	wantUpd := second.UpdateNoErrors(live.DeepCopyObject(), upd.DeepCopy(), manager)
	if !reflect.DeepEqual(withoutTimes(t, gotUpd), withoutTimes(t, wantUpd)) {
		t.Errorf("update of a live object: managed fields %+v, want %+v", withoutTimes(t, gotUpd), withoutTimes(t, wantUpd))
	}
	own := clusterRole(name, "get")
	own.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "someone", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "rbac.authorization.k8s.io/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:rules":{}}`)}, Time: &metav1.Time{}}}
	gotOwn := second.UpdateRepeatedCreate(&rbacv1.ClusterRole{}, own.DeepCopy(), manager)
	wantOwn := second.UpdateNoErrors(&rbacv1.ClusterRole{}, own.DeepCopy(), manager)
	if a, b := withoutTimes(t, gotOwn), withoutTimes(t, wantOwn); !reflect.DeepEqual(a, b) {
		t.Errorf("create with its own managed fields: %+v, want %+v", a, b)
	}
}
