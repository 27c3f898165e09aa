package handlers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// The first attempt of a PUT takes the decoded body itself; each later
// attempt (a conflict retried) takes a fresh decode from again, never the
// object an earlier attempt changed; the UID precondition is the body's
// as sent.
func TestUpdatedObjectAttempts(t *testing.T) {
	body := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: types.UID("u1")}, Data: map[string]string{"k": "v"}}
	decodes := 0
	again := func() (runtime.Object, error) {
		decodes++
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: types.UID("u1")}, Data: map[string]string{"k": "v"}}, nil
	}
	u := newUpdatedObject(body, again, &RequestScope{}, "m", func() runtime.Object { return &corev1.ConfigMap{} })
	if p := u.Preconditions(); p == nil || p.UID == nil || *p.UID != "u1" {
		t.Fatalf("preconditions %+v, want UID u1", p)
	}
	ctx := context.Background()
	first, err := u.UpdatedObject(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first != runtime.Object(body) || decodes != 0 {
		t.Fatalf("first attempt: got %p (body %p) after %d decodes, want the body itself and none", first, body, decodes)
	}
	// The attempt changes its object, as managed fields, admission and
	// the store do.
	first.(*corev1.ConfigMap).Data["k"] = "changed"
	first.(*corev1.ConfigMap).UID = ""
	for i := 1; i <= 2; i++ {
		got, err := u.UpdatedObject(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		cm := got.(*corev1.ConfigMap)
		if got == first || cm.Data["k"] != "v" || decodes != i {
			t.Errorf("attempt %d: got %+v (same as the first: %v) after %d decodes, want a fresh body and %d", i+1, cm, got == first, decodes, i)
		}
		cm.Data["k"] = "changed again"
	}
	if p := u.Preconditions(); p == nil || p.UID == nil || *p.UID != "u1" {
		t.Errorf("preconditions after the attempts %+v, want UID u1", p)
	}
}
