package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Expected errors are upstream's (kubernetes/kubernetes v1.37
// pkg/apis/storage/validation/validation.go and its tests), written
// "<type> <field>: <detail>".

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

type tcase[T any] struct {
	name   string
	mutate func(T)
	want   []string
}

func check[T any](t *testing.T, valid func() T, validate func(T) field.ErrorList, cases []tcase[T]) {
	t.Helper()
	if errs := validate(valid()); len(errs) != 0 {
		t.Fatalf("valid object: %v", errs)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := valid()
			tc.mutate(obj)
			if diff := cmp.Diff(tc.want, errStrings(validate(obj))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

const dns1123 = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

// dns1123Caseless is the declarative +k8s:format=k8s-long-name-caseless
// message (kube-apiserver v1.37.2's answer; the regex it quotes is the
// lowercase one).
const dns1123Caseless = "an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

func validStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "low-latency"},
		Provisioner:       "csi-driver.example-vendor.example",
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
		Parameters:        map[string]string{"guaranteedReadWriteLatency": "true"},
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "topology.kubernetes.io/zone", Values: []string{"a"}}}}},
	}
}

func TestValidateStorageClass(t *testing.T) {
	check(t, validStorageClass, ValidateStorageClass, []tcase[*storagev1.StorageClass]{
		{"no provisioner", func(s *storagev1.StorageClass) { s.Provisioner = "" },
			[]string{"FieldValueRequired provisioner: "}},
		{"bad provisioner", func(s *storagev1.StorageClass) { s.Provisioner = "a/b/c" },
			[]string{"FieldValueInvalid provisioner: a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
		{"Recycle", func(s *storagev1.StorageClass) { s.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRecycle) },
			[]string{`FieldValueNotSupported reclaimPolicy: supported values: "Delete", "Retain"`}},
		{"no binding mode", func(s *storagev1.StorageClass) { s.VolumeBindingMode = nil },
			[]string{"FieldValueRequired volumeBindingMode: "}},
		{"bad binding mode", func(s *storagev1.StorageClass) { s.VolumeBindingMode = ptr.To[storagev1.VolumeBindingMode]("Later") },
			[]string{`FieldValueNotSupported volumeBindingMode: supported values: "Immediate", "WaitForFirstConsumer"`}},
		{"empty parameter key", func(s *storagev1.StorageClass) { s.Parameters[""] = "x" },
			[]string{"FieldValueInvalid parameters: field can not be empty."}},
		{"too many parameters", func(s *storagev1.StorageClass) {
			for i := range 513 {
				s.Parameters[fmt.Sprint("k", i)] = "v"
			}
		}, []string{"FieldValueTooLong parameters: may not be more than 512 bytes"}},
		{"topology without values", func(s *storagev1.StorageClass) { s.AllowedTopologies[0].MatchLabelExpressions[0].Values = nil },
			[]string{"FieldValueRequired allowedTopologies[0].matchLabelExpressions[0].values: "}},
		{"duplicate topology", func(s *storagev1.StorageClass) {
			s.AllowedTopologies = append(s.AllowedTopologies, s.AllowedTopologies[0])
		},
			[]string{"FieldValueDuplicate allowedTopologies[1].matchLabelExpressions: "}},
		{"bad name", func(s *storagev1.StorageClass) { s.Name = "Low_Latency" },
			[]string{"FieldValueInvalid metadata.name: " + dns1123}},
	})
	old, upd := validStorageClass(), validStorageClass()
	upd.Parameters = map[string]string{"x": "y"}
	upd.Provisioner = "other"
	upd.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
	upd.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	want := []string{
		// kube-apiserver v1.37.2 answers these from +k8s:immutable (beta),
		// "Invalid value: null: field is immutable"; the store orders them.
		"FieldValueInvalid parameters: field is immutable",
		"FieldValueInvalid provisioner: field is immutable",
		"FieldValueInvalid reclaimPolicy: field is immutable",
		"FieldValueInvalid volumeBindingMode: field is immutable",
	}
	if diff := cmp.Diff(want, errStrings(ValidateStorageClassUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func validCSIDriver() *storagev1.CSIDriver {
	return &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "hostpath.csi.k8s.io"},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false), StorageCapacity: ptr.To(false),
			FSGroupPolicy:        ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
			RequiresRepublish:    ptr.To(false), SELinuxMount: ptr.To(false), PreventPodSchedulingIfMissing: ptr.To(false),
			TokenRequests: []storagev1.TokenRequest{{Audience: "vault", ExpirationSeconds: ptr.To[int64](3600)}},
		},
	}
}

func TestValidateCSIDriver(t *testing.T) {
	check(t, validCSIDriver, ValidateCSIDriver, []tcase[*storagev1.CSIDriver]{
		{"no attachRequired", func(d *storagev1.CSIDriver) { d.Spec.AttachRequired = nil },
			[]string{"FieldValueRequired spec.attachedRequired: "}},
		{"no podInfoOnMount", func(d *storagev1.CSIDriver) { d.Spec.PodInfoOnMount = nil },
			[]string{"FieldValueRequired spec.podInfoOnMount: "}},
		{"no preventPodSchedulingIfMissing", func(d *storagev1.CSIDriver) { d.Spec.PreventPodSchedulingIfMissing = nil },
			[]string{"FieldValueRequired spec.preventPodSchedulingIfMissing: "}},
		{"bad fsGroupPolicy", func(d *storagev1.CSIDriver) { d.Spec.FSGroupPolicy = ptr.To[storagev1.FSGroupPolicy]("Sometimes") },
			[]string{`FieldValueNotSupported spec.fsGroupPolicy: supported values: "File", "None", "ReadWriteOnceWithFSType"`}},
		{"bad lifecycle mode", func(d *storagev1.CSIDriver) {
			d.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{"Forever"}
		}, []string{`FieldValueNotSupported spec.volumeLifecycleModes: supported values: "Persistent", "Ephemeral"`}},
		{"duplicate audience", func(d *storagev1.CSIDriver) {
			d.Spec.TokenRequests = append(d.Spec.TokenRequests, d.Spec.TokenRequests[0])
		},
			[]string{`FieldValueDuplicate spec.tokenRequests[1].audience: `}},
		{"short token", func(d *storagev1.CSIDriver) { d.Spec.TokenRequests[0].ExpirationSeconds = ptr.To[int64](60) },
			[]string{"FieldValueInvalid spec.tokenRequests[0].expirationSeconds: may not specify a duration less than 10 minutes"}},
		{"long token", func(d *storagev1.CSIDriver) { d.Spec.TokenRequests[0].ExpirationSeconds = ptr.To[int64](1<<32 + 1) },
			[]string{"FieldValueInvalid spec.tokenRequests[0].expirationSeconds: may not specify a duration larger than 2^32 seconds"}},
		{"bad name", func(d *storagev1.CSIDriver) { d.Name = "Host_Path" },
			[]string{"FieldValueInvalid metadata.name: " + dns1123}},
		{"no fsGroupPolicy (not required)", func(d *storagev1.CSIDriver) { d.Spec.FSGroupPolicy = nil }, nil},
		{"update period under 10s", func(d *storagev1.CSIDriver) { d.Spec.NodeAllocatableUpdatePeriodSeconds = ptr.To[int64](5) },
			[]string{"FieldValueInvalid spec.nodeAllocatableUpdatePeriodSeconds: must be greater than or equal to 10 seconds"}},
	})
	old, upd := validCSIDriver(), validCSIDriver()
	upd.Spec.AttachRequired = ptr.To(false)
	upd.Spec.PodInfoOnMount = ptr.To(true)
	upd.Spec.FSGroupPolicy = ptr.To(storagev1.FileFSGroupPolicy)
	upd.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
	if diff := cmp.Diff([]string{"FieldValueInvalid spec.attachedRequired: field is immutable", "FieldValueInvalid spec.volumeLifecycleModes: field is immutable"}, errStrings(ValidateCSIDriverUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func TestValidateCSINode(t *testing.T) {
	valid := func() *storagev1.CSINode {
		return &storagev1.CSINode{
			ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
				Name: "ebs.csi.aws.com", NodeID: "i-123", TopologyKeys: []string{"topology.kubernetes.io/zone"},
				Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](25)},
			}}},
		}
	}
	check(t, valid, ValidateCSINode, []tcase[*storagev1.CSINode]{
		{"no nodeID", func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = "" },
			[]string{"FieldValueRequired spec.drivers[0].nodeID: "}},
		{"nodeID too long", func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = strings.Repeat("i", 257) },
			[]string{"FieldValueInvalid spec.drivers[0].nodeID: must be 256 characters or less"}},
		{"duplicate driver", func(n *storagev1.CSINode) { n.Spec.Drivers = append(n.Spec.Drivers, n.Spec.Drivers[0]) },
			[]string{`FieldValueDuplicate spec.drivers[1].name: `}},
		{"duplicate topology key", func(n *storagev1.CSINode) {
			n.Spec.Drivers[0].TopologyKeys = append(n.Spec.Drivers[0].TopologyKeys, "topology.kubernetes.io/zone")
		}, []string{`FieldValueDuplicate spec.drivers[0]: `}},
		{"negative count", func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](-1) },
			[]string{"FieldValueInvalid spec.drivers[0].allocatable.count: must be greater than or equal to 0"}},
	})
	old, upd := valid(), valid()
	upd.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](30)
	if errs := ValidateCSINodeUpdateFields(upd, old); len(errs) != 0 {
		t.Errorf("allocatable count change: %v", errs)
	}
	upd.Spec.Drivers[0].NodeID = "i-456"
	if diff := cmp.Diff([]string{"FieldValueInvalid spec.drivers: field is immutable"}, errStrings(ValidateCSINodeUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func TestValidateCSIStorageCapacity(t *testing.T) {
	valid := func() *storagev1.CSIStorageCapacity {
		return &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: "cap", Namespace: "default"},
			StorageClassName: "fast",
			Capacity:         ptr.To(resource.MustParse("10Gi")),
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": "a"}},
		}
	}
	validate := func(c *storagev1.CSIStorageCapacity) field.ErrorList {
		return ValidateCSIStorageCapacity(c, CSIStorageCapacityOptions{})
	}
	check(t, valid, validate, []tcase[*storagev1.CSIStorageCapacity]{
		{"negative capacity", func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptr.To(resource.MustParse("-1")) },
			[]string{"FieldValueInvalid capacity: must be greater than or equal to 0"}},
		{"no class", func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = "" },
			[]string{"FieldValueInvalid storageClassName: " + dns1123}},
		{"no namespace", func(c *storagev1.CSIStorageCapacity) { c.Namespace = "" },
			[]string{"FieldValueRequired metadata.namespace: "}},
	})
	old, upd := valid(), valid()
	upd.StorageClassName = "slow"
	if diff := cmp.Diff([]string{"FieldValueInvalid storageClassName: field is immutable"}, errStrings(ValidateCSIStorageCapacityUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func TestValidateVolumeAttachment(t *testing.T) {
	valid := func() *storagev1.VolumeAttachment {
		return &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: "csi-123"},
			Spec: storagev1.VolumeAttachmentSpec{
				Attacher: "ebs.csi.aws.com", NodeName: "node-1",
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")},
			},
		}
	}
	check(t, valid, ValidateVolumeAttachment, []tcase[*storagev1.VolumeAttachment]{
		{"no source", func(v *storagev1.VolumeAttachment) { v.Spec.Source.PersistentVolumeName = nil },
			[]string{"FieldValueRequired spec.source: must specify exactly one of inlineVolumeSpec and persistentVolumeName"}},
		{"two sources", func(v *storagev1.VolumeAttachment) {
			v.Spec.Source.InlineVolumeSpec = &corev1.PersistentVolumeSpec{}
		}, []string{"FieldValueForbidden spec.source: must specify exactly one of inlineVolumeSpec and persistentVolumeName"}},
		{"bad node name", func(v *storagev1.VolumeAttachment) { v.Spec.NodeName = "Node_1" },
			[]string{"FieldValueInvalid spec.nodeName: " + dns1123}},
		// On create, the attacher's errors are the declarative validators'
		// (caseless format, characters), after the others.
		{"bad attacher", func(v *storagev1.VolumeAttachment) {
			v.Spec.Attacher = "EBS_CSI." + strings.Repeat("a", 60)
			v.Spec.NodeName = "Node_1"
		}, []string{
			"FieldValueInvalid spec.nodeName: " + dns1123,
			"FieldValueInvalid spec.attacher: " + dns1123Caseless,
			"FieldValueTooLong spec.attacher: may not be more than 63 characters",
		}},
		{"no attacher", func(v *storagev1.VolumeAttachment) { v.Spec.Attacher = "" },
			[]string{"FieldValueRequired spec.attacher: "}},
		{"long error message, negative code", func(v *storagev1.VolumeAttachment) {
			v.Status.AttachError = &storagev1.VolumeError{Message: strings.Repeat("x", 1025), ErrorCode: ptr.To[int32](-1)}
		}, []string{
			"FieldValueTooLong status.attachError.message: may not be more than 1024 bytes",
			"FieldValueInvalid status.attachError.errorCode: must be between 0 and 2147483647, inclusive",
		}},
		{"inline spec without capacity", func(v *storagev1.VolumeAttachment) {
			v.Spec.Source.PersistentVolumeName = nil
			v.Spec.Source.InlineVolumeSpec = &corev1.PersistentVolumeSpec{
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}},
			}
		}, []string{"FieldValueRequired spec.source.inlineVolumeSpec.capacity: ", `FieldValueNotSupported spec.source.inlineVolumeSpec.capacity: supported values: "storage"`}},
	})
	old, upd := valid(), valid()
	upd.Spec.NodeName = "node-2"
	// On update the attacher's errors are the handwritten ones, and the
	// spec's immutability the declarative rule's.
	upd.Spec.Attacher = "EBS_CSI"
	want := []string{"FieldValueInvalid spec.attacher: " + dns1123, "FieldValueInvalid spec: field is immutable"}
	if diff := cmp.Diff(want, errStrings(ValidateVolumeAttachmentUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func TestValidateVolumeAttributesClass(t *testing.T) {
	valid := func() *storagev1.VolumeAttributesClass {
		return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "silver"}, DriverName: "pd.csi.storage.gke.io", Parameters: map[string]string{"iops": "3000"}}
	}
	check(t, valid, ValidateVolumeAttributesClass, []tcase[*storagev1.VolumeAttributesClass]{
		{"no driver", func(c *storagev1.VolumeAttributesClass) { c.DriverName = "" },
			[]string{"FieldValueRequired driverName: "}},
		{"no parameters", func(c *storagev1.VolumeAttributesClass) { c.Parameters = nil },
			[]string{"FieldValueRequired parameters: must contain at least one key/value pair"}},
	})
	old, upd := valid(), valid()
	upd.DriverName = "other"
	upd.Parameters = map[string]string{"iops": "5000"}
	want := []string{"FieldValueForbidden driverName: updates to driverName are forbidden.", "FieldValueForbidden parameters: updates to parameters are forbidden."}
	if diff := cmp.Diff(want, errStrings(ValidateVolumeAttributesClassUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

// csinodes/status: upstream's ValidateCSINodeStatusUpdate (v1.37.2).
func TestValidateCSINodeStatus(t *testing.T) {
	valid := func() *storagev1.CSINode {
		return &storagev1.CSINode{
			ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
			Status: storagev1.CSINodeStatus{StorageHealth: []storagev1.StorageHealth{{
				Name: "ebs.csi.aws.com",
				HealthConditions: []storagev1.StorageHealthCondition{{
					Status: storagev1.StorageUnreachable, Reason: "BackendDown", Message: "no route",
					AccessMode: ptr.To(corev1.ReadWriteOncePod), VolumeMode: ptr.To(corev1.PersistentVolumeBlock),
				}},
			}}},
		}
	}
	check(t, valid, ValidateCSINodeStatusFields, []tcase[*storagev1.CSINode]{
		{"duplicate driver", func(n *storagev1.CSINode) {
			n.Status.StorageHealth = append(n.Status.StorageHealth, n.Status.StorageHealth[0])
		}, []string{"FieldValueDuplicate status.storageHealth[1]: "}},
		{"no name", func(n *storagev1.CSINode) { n.Status.StorageHealth[0].Name = "" },
			[]string{"FieldValueRequired status.storageHealth[0].name: "}},
		{"too many conditions", func(n *storagev1.CSINode) {
			c := n.Status.StorageHealth[0].HealthConditions[0]
			for range 16 {
				n.Status.StorageHealth[0].HealthConditions = append(n.Status.StorageHealth[0].HealthConditions, c)
			}
		}, []string{"FieldValueTooMany status.storageHealth[0].healthConditions: must have at most 16 items"}},
		{"bad condition", func(n *storagev1.CSINode) {
			c := &n.Status.StorageHealth[0].HealthConditions[0]
			c.Status, c.Reason, c.Message = "Broken", "", strings.Repeat("m", 1025)
			c.AccessMode, c.VolumeMode = ptr.To[corev1.PersistentVolumeAccessMode]("Any"), ptr.To[corev1.PersistentVolumeMode]("Raw")
		}, []string{
			`FieldValueNotSupported status.storageHealth[0].healthConditions[0].status: supported values: "StorageDegraded", "StorageUnreachable"`,
			"FieldValueRequired status.storageHealth[0].healthConditions[0].reason: ",
			"FieldValueTooLong status.storageHealth[0].healthConditions[0].message: may not be more than 1024 bytes",
			`FieldValueNotSupported status.storageHealth[0].healthConditions[0].accessMode: supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
			`FieldValueNotSupported status.storageHealth[0].healthConditions[0].volumeMode: supported values: "Filesystem", "Block"`,
		}},
		{"bad reason", func(n *storagev1.CSINode) { n.Status.StorageHealth[0].HealthConditions[0].Reason = "not a reason" },
			[]string{"FieldValueInvalid status.storageHealth[0].healthConditions[0].reason: a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"}},
	})
}

// TestAllowedTopologiesEmptyTerm: a term without expressions is a
// duplicate of each of the nil terms upstream's list starts with (the
// generic store reports the repeated error once, as upstream's
// ToAggregate). kube-apiserver v1.37.2 answered [{k: []}, {}] with
// allowedTopologies[0].matchLabelExpressions[0].values: Required value and
// allowedTopologies[1].matchLabelExpressions: Duplicate value: "".
func TestAllowedTopologiesEmptyTerm(t *testing.T) {
	terms := []corev1.TopologySelectorTerm{
		{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "k"}}},
		{},
	}
	var got []string
	for _, e := range validateAllowedTopologies(terms, field.NewPath("allowedTopologies")) {
		got = append(got, e.Error())
	}
	dup := `allowedTopologies[1].matchLabelExpressions: Duplicate value: ""`
	want := []string{"allowedTopologies[0].matchLabelExpressions[0].values: Required value", dup, dup}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}
