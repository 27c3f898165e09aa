package installer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestDeprecationWarning: the warnings kube-apiserver v1.37.2 sends with
// every response about its deprecated resources (seen on a list of each;
// no other resource it serves has one), and the removed_release label of
// apiserver_requested_deprecated_apis (k8s.io/apiserver v0.37.2
// pkg/endpoints/deprecation RemovedRelease: "<major>.<minor>" of
// APILifecycleRemoved, "" without one; flowcontrol v1beta3, not served by
// kapi nor by default upstream, is the case of a type that has one:
// zz_generated.prerelease-lifecycle.go, deprecated 1.29, removed 1.32).
func TestDeprecationWarning(t *testing.T) {
	for _, tc := range []struct {
		obj         runtime.Object
		kind        schema.GroupVersionKind
		want        string
		wantRemoved string
	}{
		{&corev1.Endpoints{}, corev1.SchemeGroupVersion.WithKind("Endpoints"), "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice", ""},
		{&corev1.ComponentStatus{}, corev1.SchemeGroupVersion.WithKind("ComponentStatus"), "v1 ComponentStatus is deprecated in v1.19+", ""},
		{&corev1.ConfigMap{}, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "", ""},
		{&flowcontrolv1beta3.FlowSchema{}, flowcontrolv1beta3.SchemeGroupVersion.WithKind("FlowSchema"),
			"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 FlowSchema", "1.32"},
	} {
		if got := deprecationWarning(tc.obj, tc.kind); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.kind.Kind, got, tc.want)
		}
		if msg, removed := deprecation(tc.obj, tc.kind); msg != tc.want || removed != tc.wantRemoved {
			t.Errorf("%s: deprecation got %q, %q, want %q, %q", tc.kind.Kind, msg, removed, tc.want, tc.wantRemoved)
		}
	}
}
