package corev1

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// podIP and podIPs as v1.37's SetDefaults_PodStatus keeps them; the two
// status patches of the last cases were answered so by kube-apiserver
// v1.37.2 (hostIP alone stays alone).
func TestSetDefaultsPodStatus(t *testing.T) {
	ips := func(s ...string) []corev1.PodIP {
		var out []corev1.PodIP
		for _, ip := range s {
			out = append(out, corev1.PodIP{IP: ip})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		in, want corev1.PodStatus
	}{
		{"none", corev1.PodStatus{}, corev1.PodStatus{}},
		{"podIP only", corev1.PodStatus{PodIP: "10.1.2.3", HostIP: "10.0.0.1"}, corev1.PodStatus{PodIP: "10.1.2.3", PodIPs: ips("10.1.2.3"), HostIP: "10.0.0.1"}},
		{"podIPs only", corev1.PodStatus{PodIPs: ips("10.1.2.4", "fd00::4")}, corev1.PodStatus{PodIP: "10.1.2.4", PodIPs: ips("10.1.2.4", "fd00::4")}},
		{"agree", corev1.PodStatus{PodIP: "10.1.2.4", PodIPs: ips("10.1.2.4", "fd00::4")}, corev1.PodStatus{PodIP: "10.1.2.4", PodIPs: ips("10.1.2.4", "fd00::4")}},
		{"disagree: podIP wins", corev1.PodStatus{PodIP: "10.1.2.3", PodIPs: ips("10.1.2.4")}, corev1.PodStatus{PodIP: "10.1.2.3", PodIPs: ips("10.1.2.3")}},
	} {
		pod := &corev1.Pod{Status: tc.in}
		SetObjectDefaults_Pod(pod)
		if !reflect.DeepEqual(pod.Status, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, pod.Status, tc.want)
		}
	}
}
