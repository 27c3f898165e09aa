package generic

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Update validates with copies of the new and the current object unless
// the context says (rest.WithUpdateObjectsRead, asked at validation time)
// that the validation reads neither; the result is the same either way.
func TestUpdateValidationCopies(t *testing.T) {
	for _, tc := range []struct {
		name       string
		reads      func() bool // nil: no WithUpdateObjectsRead
		wantCopies bool
	}{
		{name: "no answer", wantCopies: true},
		{name: "read", reads: func() bool { return true }, wantCopies: true},
		{name: "unread", reads: func() bool { return false }, wantCopies: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newConfigMapStore(t, newBackend(t))
			ctx := nsCtx("ns")
			mustCreate(t, s, ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "ns"}, Data: map[string]string{"k": "v1"}})
			var updated, existing runtime.Object
			info := objInfo{fn: func(old runtime.Object) (runtime.Object, error) {
				existing = old
				o := old.DeepCopyObject().(*corev1.ConfigMap)
				o.Data = map[string]string{"k": "v2"}
				updated = o
				return o, nil
			}}
			asked := 0
			if tc.reads != nil {
				ctx = rest.WithUpdateObjectsRead(ctx, func() bool { asked++; return tc.reads() })
			}
			calls := 0
			validate := func(_ context.Context, obj, old runtime.Object) error {
				calls++
				if copied := obj != updated; copied != tc.wantCopies {
					t.Errorf("new object copied: %v, want %v", copied, tc.wantCopies)
				}
				if copied := old != existing; copied != tc.wantCopies {
					t.Errorf("current object copied: %v, want %v", copied, tc.wantCopies)
				}
				if got := obj.(*corev1.ConfigMap).Data["k"]; got != "v2" {
					t.Errorf("validated new object has k=%q, want v2", got)
				}
				if got := old.(*corev1.ConfigMap).Data["k"]; got != "v1" {
					t.Errorf("validated current object has k=%q, want v1", got)
				}
				return nil
			}
			out, _, err := s.Update(ctx, "foo", info, nil, validate, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if calls != 1 {
				t.Errorf("validation called %d times, want 1", calls)
			}
			if tc.reads != nil && asked != 1 {
				t.Errorf("reads asked %d times, want 1 (at validation)", asked)
			}
			if got := out.(*corev1.ConfigMap).Data["k"]; got != "v2" {
				t.Errorf("stored k=%q, want v2", got)
			}
		})
	}
}
