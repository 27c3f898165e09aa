package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func validNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-1", ResourceVersion: "1"},
		Spec:       corev1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24"}, ProviderID: "aws:///i-1"},
		Status: corev1.NodeStatus{
			Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}},
		},
	}
}

// The expected types, paths and messages are upstream's ValidateNode and
// ValidateNodeUpdate (pkg/apis/core/validation/validation.go, kubernetes
// v1.37, and the apimachinery validation messages they use).
func TestValidateNode(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Node)
		want   []string
	}{
		{"valid", func(*corev1.Node) {}, nil},
		{"invalid name", func(n *corev1.Node) { n.Name = "Worker_1" }, []string{
			"FieldValueInvalid metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
		}},
		{"taint without effect", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu"}} }, []string{
			"FieldValueRequired metadata.taints[0].effect: ",
		}},
		{"taint with unknown effect", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: "Evict"}}
		}, []string{`FieldValueNotSupported metadata.taints[0].effect: supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`}},
		{"taint with invalid key", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "bad key", Effect: corev1.TaintEffectNoSchedule}}
		}, []string{"FieldValueInvalid metadata.taints[0].key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}},
		{"duplicate taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Value: "b", Effect: corev1.TaintEffectNoSchedule}}
		}, []string{"FieldValueDuplicate metadata.taints[1]: taints must be unique by key and effect pair"}},
		{"negative capacity", func(n *corev1.Node) { n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("-1") }, []string{
			"FieldValueInvalid status.capacity.cpu: must be greater than or equal to 0",
		}},
		{"fractional pods", func(n *corev1.Node) {
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1500m")}
		}, []string{
			"FieldValueInvalid status.allocatable.pods: must be an integer",
		}},
		{"invalid pod CIDR", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0"} }, []string{
			"FieldValueInvalid spec.podCIDRs[0]: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
		}},
		{"two IPv4 pod CIDRs", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "10.244.2.0/24"} }, []string{
			"FieldValueInvalid spec.podCIDRs: may specify no more than one CIDR for each IP family",
		}},
		{"taints annotation not JSON", func(n *corev1.Node) {
			n.Annotations = map[string]string{corev1.TaintsAnnotationKey: "{"}
		}, []string{"FieldValueInvalid metadata.annotations: unexpected end of JSON input"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := validNode()
			tc.mutate(n)
			expectErrs(t, ValidateNode(n), tc.want)
		})
	}
}

func TestValidateNodeUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Node)
		want   []string
	}{
		{"labels and unschedulable change", func(n *corev1.Node) {
			n.Labels = map[string]string{"zone": "a"}
			n.Spec.Unschedulable = true
		}, nil},
		{"pod CIDRs change", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.9.0/24"} }, []string{
			`FieldValueForbidden spec.podCIDRs: node updates may not change podCIDR except from "" to valid`,
		}},
		{"provider ID change", func(n *corev1.Node) { n.Spec.ProviderID = "aws:///i-2" }, []string{
			`FieldValueForbidden spec.providerID: node updates may not change providerID except from "" to valid`,
		}},
		{"external ID change", func(n *corev1.Node) { n.Spec.DoNotUseExternalID = "x" }, []string{
			"FieldValueForbidden spec.externalID: may not be updated",
		}},
		{"duplicate address", func(n *corev1.Node) {
			n.Status.Addresses = append(n.Status.Addresses, n.Status.Addresses[0])
		}, []string{`FieldValueDuplicate status.addresses[1]: `}},
		{"config source without reference", func(n *corev1.Node) { n.Spec.ConfigSource = &corev1.NodeConfigSource{} }, []string{
			"FieldValueInvalid spec.configSource: exactly one reference subfield must be non-nil",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validNode()
			n := old.DeepCopy()
			tc.mutate(n)
			expectErrs(t, ValidateNodeUpdate(n, old), tc.want)
		})
	}
	// A pod CIDR may be assigned once.
	old := validNode()
	old.Spec.PodCIDRs = nil
	n := validNode()
	expectErrs(t, ValidateNodeUpdate(n, old), nil)
}
