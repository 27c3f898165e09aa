package pvcresize

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/admission"
)

type classes map[string]*storagev1.StorageClass

func (c classes) Get(_ context.Context, _, name string) (runtime.Object, error) {
	if sc, ok := c[name]; ok {
		return sc, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, name)
}

func claim(size, class string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
	}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	if class != "" {
		pvc.Spec.StorageClassName = ptr.To(class)
	}
	return pvc
}

// Cases after upstream's resize admission_test.go (v1.37 messages).
func TestValidate(t *testing.T) {
	p := New(classes{
		"grows": {AllowVolumeExpansion: ptr.To(true)},
		"fixed": {AllowVolumeExpansion: ptr.To(false)},
		"unset": {},
	})
	notBound := `persistentvolumeclaims "c" is forbidden: Only bound persistent volume claims can be expanded`
	noResize := `persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
	for _, tc := range []struct {
		name     string
		old, new *corev1.PersistentVolumeClaim
		want     string
	}{
		{"grow bound expandable", claim("1Gi", "grows", corev1.ClaimBound), claim("2Gi", "grows", corev1.ClaimBound), ""},
		{"shrink is not this plugin's", claim("2Gi", "fixed", corev1.ClaimBound), claim("1Gi", "fixed", corev1.ClaimBound), ""},
		{"same size", claim("1Gi", "fixed", corev1.ClaimPending), claim("1Gi", "fixed", corev1.ClaimPending), ""},
		{"grow pending", claim("1Gi", "grows", corev1.ClaimPending), claim("2Gi", "grows", corev1.ClaimPending), notBound},
		{"grow fixed", claim("1Gi", "fixed", corev1.ClaimBound), claim("2Gi", "fixed", corev1.ClaimBound), noResize},
		{"grow unset", claim("1Gi", "unset", corev1.ClaimBound), claim("2Gi", "unset", corev1.ClaimBound), noResize},
		{"grow without class", claim("1Gi", "", corev1.ClaimBound), claim("2Gi", "", corev1.ClaimBound), noResize},
		{"class changed", claim("1Gi", "fixed", corev1.ClaimBound), claim("2Gi", "grows", corev1.ClaimBound), noResize},
		{"missing class", claim("1Gi", "gone", corev1.ClaimBound), claim("2Gi", "gone", corev1.ClaimBound), noResize},
	} {
		err := p.Validate(context.Background(), admission.Attributes{
			Operation: admission.Update, Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"},
			Name: "c", Object: tc.new, OldObject: tc.old,
		})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || (err != nil && !apierrors.IsForbidden(err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
