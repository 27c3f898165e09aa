package corev1

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSyncPodCIDRs: the cases of upstream's conversion through the
// internal version (kubernetes v1.37 pkg/apis/core/v1/conversion.go,
// Convert_v1_NodeSpec_To_core_NodeSpec then Convert_core_NodeSpec_To_v1_NodeSpec).
func TestSyncPodCIDRs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want corev1.NodeSpec
	}{
		{"none", corev1.NodeSpec{}, corev1.NodeSpec{}},
		{"podCIDR alone", corev1.NodeSpec{PodCIDR: "10.0.0.0/24"}, corev1.NodeSpec{PodCIDR: "10.0.0.0/24", PodCIDRs: []string{"10.0.0.0/24"}}},
		{"podCIDRs alone", corev1.NodeSpec{PodCIDRs: []string{"10.0.0.0/24", "fd00::/64"}}, corev1.NodeSpec{PodCIDR: "10.0.0.0/24", PodCIDRs: []string{"10.0.0.0/24", "fd00::/64"}}},
		{"both agree", corev1.NodeSpec{PodCIDR: "10.0.0.0/24", PodCIDRs: []string{"10.0.0.0/24", "fd00::/64"}}, corev1.NodeSpec{PodCIDR: "10.0.0.0/24", PodCIDRs: []string{"10.0.0.0/24", "fd00::/64"}}},
		{"both differ: podCIDR wins", corev1.NodeSpec{PodCIDR: "10.1.0.0/24", PodCIDRs: []string{"10.0.0.0/24", "fd00::/64"}}, corev1.NodeSpec{PodCIDR: "10.1.0.0/24", PodCIDRs: []string{"10.1.0.0/24"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := *tc.in.DeepCopy()
			SyncPodCIDRs(&got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
