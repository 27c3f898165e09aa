package defaultstorageclass

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// classes serves fixed StorageClasses (storage.k8s.io is not served on
// main yet; see the package comment).
type classes []storagev1.StorageClass

func (c classes) List(context.Context, string) (runtime.Object, error) {
	return &storagev1.StorageClassList{Items: c}, nil
}

func sc(name string, def string, age time.Duration) storagev1.StorageClass {
	s := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age))}}
	if def != "" {
		s.Annotations = map[string]string{def: "true"}
	}
	return s
}

// Cases after upstream's setdefault admission_test.go.
func TestAdmit(t *testing.T) {
	pvcs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	explicit := "mine"
	for _, tc := range []struct {
		name    string
		classes classes
		pvc     *corev1.PersistentVolumeClaim
		want    string // "" means no class set
	}{
		{"no default", classes{sc("a", "", 0)}, &corev1.PersistentVolumeClaim{}, ""},
		{"one default", classes{sc("a", "", 0), sc("b", IsDefaultAnnotation, 0)}, &corev1.PersistentVolumeClaim{}, "b"},
		{"beta default", classes{sc("b", BetaIsDefaultAnnotation, 0)}, &corev1.PersistentVolumeClaim{}, "b"},
		{"newest of two defaults", classes{sc("old", IsDefaultAnnotation, time.Hour), sc("new", IsDefaultAnnotation, 0)}, &corev1.PersistentVolumeClaim{}, "new"},
		{"explicit class kept", classes{sc("b", IsDefaultAnnotation, 0)}, &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &explicit}}, "mine"},
		{"beta annotation counts as a class", classes{sc("b", IsDefaultAnnotation, 0)},
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{BetaStorageClassAnnotation: "x"}}}, ""},
	} {
		if err := New(tc.classes).Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pvcs, Object: tc.pvc}); err != nil {
			t.Fatal(err)
		}
		got := ""
		if tc.pvc.Spec.StorageClassName != nil {
			got = *tc.pvc.Spec.StorageClassName
		}
		if got != tc.want {
			t.Errorf("%s: class %q, want %q", tc.name, got, tc.want)
		}
	}
}
