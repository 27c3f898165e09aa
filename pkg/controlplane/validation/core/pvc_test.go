package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func validPVC() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "task-pv-claim", Namespace: "default", ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("manual"),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")},
			},
			VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
		},
	}
}

// The expected types, paths and messages are upstream's
// ValidatePersistentVolumeClaim and ValidatePersistentVolumeClaimUpdate
// (pkg/apis/core/validation/validation.go, kubernetes v1.37).
func TestValidatePersistentVolumeClaim(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.PersistentVolumeClaim)
		want   []string
	}{
		{"valid", func(*corev1.PersistentVolumeClaim) {}, nil},
		{"no access modes", func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil }, []string{
			"FieldValueRequired spec.accessModes: at least 1 access mode is required",
		}},
		{"unknown access mode", func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"RWO"} }, []string{
			`FieldValueNotSupported spec.accessModes: supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
		}},
		{"no storage request", func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }, []string{
			"FieldValueRequired spec.resources[storage]: ",
		}},
		{"zero storage request", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}, []string{"FieldValueInvalid spec.resources[storage]: must be greater than zero"}},
		{"invalid selector", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Has"}}}
		}, []string{"FieldValueInvalid spec.selector.matchExpressions[0].operator: not a valid selector operator"}},
		{"invalid storage class", func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("Fast SSD") }, []string{
			"FieldValueInvalid spec.storageClassName: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
		}},
		{"unknown volume mode", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Raw")) }, []string{
			`FieldValueNotSupported spec.volumeMode: supported values: "Block", "Filesystem"`,
		}},
		{"data source of a core kind", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Pod", Name: "p"}
		}, []string{"FieldValueInvalid spec.dataSource: must be 'PersistentVolumeClaim' when referencing the default apiGroup"}},
		{"data source without name", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim"}
		}, []string{"FieldValueRequired spec.dataSource.name: "}},
		{"data source and ref differ", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "a"}
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "b"}
		}, []string{"FieldValueInvalid spec: must match dataSourceRef"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validPVC()
			tc.mutate(c)
			expectErrs(t, ValidatePersistentVolumeClaim(c), tc.want)
		})
	}
}

func TestValidatePersistentVolumeClaimUpdate(t *testing.T) {
	old := validPVC()
	// volumeName may be set once.
	c := old.DeepCopy()
	c.Spec.VolumeName = "task-pv-volume"
	expectErrs(t, ValidatePersistentVolumeClaimUpdateFields(c, old), nil)

	// The spec is immutable but for the storage request of bound claims.
	c = old.DeepCopy()
	c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	errs := ValidatePersistentVolumeClaimUpdateFields(c, old)
	if len(errs) != 1 || errs[0].Field != "spec" ||
		!strings.HasPrefix(errs[0].Detail, "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n") {
		t.Errorf("got %v, want spec immutable with a diff", fieldErrs(errs))
	}
	bound := old.DeepCopy()
	bound.Status.Phase = corev1.ClaimBound
	bound.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}
	c = bound.DeepCopy()
	c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("5Gi")
	expectErrs(t, ValidatePersistentVolumeClaimUpdateFields(c, bound), nil)
	c = bound.DeepCopy()
	c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1Gi")
	expectErrs(t, ValidatePersistentVolumeClaimUpdateFields(c, bound), []string{
		"FieldValueForbidden spec.resources.requests.storage: field can not be less than status.capacity",
	})
	// The class may move from the beta annotation to the field.
	annotated := old.DeepCopy()
	annotated.Spec.StorageClassName = nil
	annotated.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "gold"}
	c = annotated.DeepCopy()
	c.Spec.StorageClassName = ptr.To("gold")
	expectErrs(t, ValidatePersistentVolumeClaimUpdateFields(c, annotated), nil)

	c = old.DeepCopy()
	c.Spec.AccessModes = nil
	c.ResourceVersion = ""
	expectErrs(t, ValidatePersistentVolumeClaimStatusUpdateFields(c, old), []string{
		"FieldValueRequired resourceVersion: ",
		"FieldValueRequired Spec.accessModes: ",
	})
}

func TestPersistentVolumeClaimWarnings(t *testing.T) {
	c := validPVC()
	c.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "slow"}
	c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1500m")
	got := strings.Join(PersistentVolumeClaimWarnings(c), "\n")
	want := `metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead` + "\n" +
		`spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`
	if got != want {
		t.Errorf("got warnings:\n%s\nwant:\n%s", got, want)
	}
}
