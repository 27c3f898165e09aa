package runtimeclass

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Cases after upstream's pkg/util/tolerations MergeTolerations tests:
// a toleration covered by another is dropped, equal ones kept once (the
// first).
func TestMergeTolerations(t *testing.T) {
	exists := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}
	equal := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	other := corev1.Toleration{Key: "o", Operator: corev1.TolerationOpEqual, Value: "v"}
	all := corev1.Toleration{Operator: corev1.TolerationOpExists}
	short := corev1.Toleration{Key: "n", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}
	long := corev1.Toleration{Key: "n", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](100)}
	for _, tc := range []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{equal}, []corev1.Toleration{other}, []corev1.Toleration{equal, other}},
		{"exists covers equal", []corev1.Toleration{equal}, []corev1.Toleration{exists}, []corev1.Toleration{exists}},
		{"duplicates once", []corev1.Toleration{equal, other}, []corev1.Toleration{equal}, []corev1.Toleration{equal, other}},
		{"match-all covers everything", []corev1.Toleration{equal, other}, []corev1.Toleration{all}, []corev1.Toleration{all}},
		{"longer NoExecute covers shorter", []corev1.Toleration{short}, []corev1.Toleration{long}, []corev1.Toleration{long}},
		{"empty", nil, nil, nil},
	} {
		if got := mergeTolerations(tc.first, tc.second); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
