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

// A pod's negative terminationGracePeriodSeconds becomes 1 (v1.37's
// SetDefaults_Pod; kube-apiserver v1.37.2 stored 1 for -5 and gave no
// warning), a template's stays.
func TestNegativeGracePeriodDefaultsToOne(t *testing.T) {
	neg := int64(-5)
	pod := &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &neg}}
	SetObjectDefaults_Pod(pod)
	if got := *pod.Spec.TerminationGracePeriodSeconds; got != 1 {
		t.Errorf("pod: terminationGracePeriodSeconds %d, want 1", got)
	}
	neg2 := int64(-5)
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &neg2}}
	SetObjectDefaults_PodTemplateSpec(tmpl)
	if got := *tmpl.Spec.TerminationGracePeriodSeconds; got != -5 {
		t.Errorf("template: terminationGracePeriodSeconds %d, want -5 kept", got)
	}
}
