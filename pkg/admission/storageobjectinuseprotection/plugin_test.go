package storageobjectinuseprotection

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

func TestAdmit(t *testing.T) {
	pvs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	pvcs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	vacs := schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattributesclasses"}
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
		// kube-apiserver v1.37.2 stores a new VolumeAttributesClass with
		// this finalizer (seen on the reference, 2026-11-27).
		{"vac", vacs, &storagev1.VolumeAttributesClass{}, []string{VACProtectionFinalizer}},
		{"vac with it already", vacs, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{VACProtectionFinalizer}}}, []string{VACProtectionFinalizer}},
		{"storage class untouched", schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, &storagev1.StorageClass{}, nil},
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
