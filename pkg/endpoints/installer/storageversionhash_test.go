package installer

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The expected hashes were observed in the discovery of kube-apiserver
// v1.37.2 built from the k8s.io/kubernetes v1.37.2 module
// (hack/build-reference.sh): events (core and events.k8s.io, both stored as
// core v1 Event), horizontalpodautoscalers (autoscaling/v1 and v2, stored as
// autoscaling/v2), csinodes and apiservices.
func TestStorageVersionHash(t *testing.T) {
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Event"}, "r2yiGXH7wu8="},
		{schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, "qwQve8ut294="},
		{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode"}, "Pe62DkZtjuo="},
		{schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}, "InPBPD7+PqM="},
	} {
		if got := StorageVersionHash(tc.gvk); got != tc.want {
			t.Errorf("StorageVersionHash(%v) = %q, want %q", tc.gvk, got, tc.want)
		}
	}
}
