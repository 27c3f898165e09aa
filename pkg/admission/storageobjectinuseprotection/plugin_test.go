package storageobjectinuseprotection

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

func TestAdmit(t *testing.T) {
	pvs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	pvcs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	for _, tc := range []struct {
		name string
		gvr  schema.GroupVersionResource
		obj  interface {
			runtime.Object
			GetFinalizers() []string
		}
		want []string
	}{
		{"pv", pvs, &corev1.PersistentVolume{}, []string{PVProtectionFinalizer}},
		{"pvc", pvcs, &corev1.PersistentVolumeClaim{}, []string{PVCProtectionFinalizer}},
		{"pvc with it already", pvcs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"x", PVCProtectionFinalizer}}}, []string{"x", PVCProtectionFinalizer}},
	} {
		if err := New().Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: tc.gvr, Object: tc.obj}); err != nil {
			t.Fatal(err)
		}
		if got := tc.obj.GetFinalizers(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
