package installer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestDeprecationWarning: the warnings kube-apiserver v1.37.2 sends with
// every response about its deprecated resources (seen on a list of each;
// no other resource it serves has one).
func TestDeprecationWarning(t *testing.T) {
	for _, tc := range []struct {
		obj  runtime.Object
		kind string
		want string
	}{
		{&corev1.Endpoints{}, "Endpoints", "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"},
		{&corev1.ComponentStatus{}, "ComponentStatus", "v1 ComponentStatus is deprecated in v1.19+"},
		{&corev1.ConfigMap{}, "ConfigMap", ""},
	} {
		if got := deprecationWarning(tc.obj, corev1.SchemeGroupVersion.WithKind(tc.kind)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.kind, got, tc.want)
		}
	}
}
