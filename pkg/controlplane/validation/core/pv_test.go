package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func validPV() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "task-pv-volume", ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "manual",
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/data", Type: ptr.To(corev1.HostPathUnset)},
			},
		},
	}
}

// The expected types, paths and messages are upstream's
// ValidatePersistentVolume / ValidatePersistentVolumeSpec
// (pkg/apis/core/validation/validation.go, kubernetes v1.37).
func TestValidatePersistentVolume(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.PersistentVolume)
		want   []string
	}{
		{"valid", func(*corev1.PersistentVolume) {}, nil},
		{"no access modes", func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }, []string{
			"FieldValueRequired spec.accessModes: ",
		}},
		{"unknown access mode", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteAll"}
		}, []string{
			`FieldValueNotSupported spec.accessModes: supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
		}},
		{"ReadWriteOncePod with another mode", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadOnlyMany}
		}, []string{"FieldValueForbidden spec.accessModes: may not use ReadWriteOncePod with other access modes"}},
		{"no capacity", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil }, []string{
			"FieldValueRequired spec.capacity: ",
			`FieldValueNotSupported spec.capacity: supported values: "storage"`,
		}},
		{"zero storage", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0") }, []string{
			"FieldValueInvalid spec.capacity[storage]: must be greater than zero",
		}},
		{"unknown reclaim policy", func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Keep" }, []string{
			`FieldValueNotSupported spec.persistentVolumeReclaimPolicy: supported values: "Delete", "Recycle", "Retain"`,
		}},
		{"no source", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = nil }, []string{
			"FieldValueRequired spec: must specify a volume type",
		}},
		{"two sources", func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/exports"}
		}, []string{"FieldValueForbidden spec.nfs: may not specify more than 1 volume type"}},
		{"hostPath without path", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "" }, []string{
			"FieldValueRequired spec.hostPath.path: ",
		}},
		{"nfs with a relative path", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs.example", Path: "exports"}
		}, []string{"FieldValueInvalid spec.nfs.path: must be an absolute path"}},
		{"local without node affinity", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd1"}
		}, []string{"FieldValueRequired spec.nodeAffinity: Local volume requires node affinity"}},
		{"node affinity without terms", func(pv *corev1.PersistentVolume) {
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{}}
		}, []string{"FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms: must have at least one node selector term"}},
		{"csi without volume handle", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com"}
		}, []string{"FieldValueRequired spec.csi.volumeHandle: "}},
		{"invalid storage class", func(pv *corev1.PersistentVolume) { pv.Spec.StorageClassName = "Fast_SSD" }, []string{
			"FieldValueInvalid spec.storageClassName: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
		}},
		{"unknown volume mode", func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Raw")) }, []string{
			`FieldValueNotSupported spec.volumeMode: supported values: "Block", "Filesystem"`,
		}},
		{"recycle of /", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath.Path = "/"
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
		}, []string{"FieldValueForbidden spec.persistentVolumeReclaimPolicy: may not be 'recycle' for a hostPath mount of '/'"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pv := validPV()
			tc.mutate(pv)
			expectErrs(t, ValidatePersistentVolume(pv), tc.want)
		})
	}
}

func TestValidatePersistentVolumeUpdate(t *testing.T) {
	old := validPV()
	pv := old.DeepCopy()
	pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("20Gi")
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	expectErrs(t, ValidatePersistentVolumeUpdateFields(pv, old), nil)

	pv = old.DeepCopy()
	pv.Spec.HostPath.Path = "/mnt/other"
	errs := ValidatePersistentVolumeUpdateFields(pv, old)
	if len(errs) != 1 || errs[0].Field != "spec.persistentvolumesource" ||
		!strings.HasPrefix(errs[0].Detail, "spec.persistentvolumesource is immutable after creation\n") {
		t.Errorf("got %v, want spec.persistentvolumesource immutable with a diff", fieldErrs(errs))
	}
	pv = old.DeepCopy()
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	expectErrs(t, ValidatePersistentVolumeUpdateFields(pv, old), []string{"FieldValueInvalid volumeMode: field is immutable"})

	pv = old.DeepCopy()
	pv.ResourceVersion = ""
	expectErrs(t, ValidatePersistentVolumeStatusUpdateFields(pv, old), []string{"FieldValueRequired resourceVersion: "})
}

func TestPersistentVolumeWarnings(t *testing.T) {
	pv := validPV()
	pv.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "slow"}
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
	pv.Spec.HostPath = nil
	pv.Spec.RBD = &corev1.RBDPersistentVolumeSource{CephMonitors: []string{"10.0.0.1:6789"}, RBDImage: "foo"}
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "failure-domain.beta.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
	}}}}
	got := strings.Join(PersistentVolumeWarnings(pv), "\n")
	want := strings.Join([]string{
		`metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
		"spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
		`spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
		"spec.rbd: deprecated in v1.28, non-functional in v1.31+",
	}, "\n")
	if got != want {
		t.Errorf("got warnings:\n%s\nwant:\n%s", got, want)
	}
}

// TestPersistentVolumeNodeAffinityUpdate: the node affinity may only move
// a key from a beta label to its GA one; any other change is answered, by
// kube-apiserver v1.37.2, "nodeAffinity: Invalid value: {...}: field is
// immutable, except for updating from beta label to GA".
func TestPersistentVolumeNodeAffinityUpdate(t *testing.T) {
	old := validPV()
	old.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelFailureDomainBetaZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
	}}}}
	pv := old.DeepCopy()
	pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key = corev1.LabelTopologyZone
	expectErrs(t, ValidatePersistentVolumeUpdateFields(pv, old), nil)
	if old.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key != corev1.LabelFailureDomainBetaZone {
		t.Error("the old object was changed")
	}
	pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"b"}
	expectErrs(t, ValidatePersistentVolumeUpdateFields(pv, old), []string{"FieldValueInvalid nodeAffinity: field is immutable, except for updating from beta label to GA"})
}
