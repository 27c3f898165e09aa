package defaulttolerationseconds

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func secs(s int64) *int64 { return &s }

// Cases after upstream's plugin/pkg/admission/defaulttolerationseconds
// admission_test.go.
func TestAdmit(t *testing.T) {
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(300)}
	unreachable := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(300)}
	own := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(60)}
	for _, tc := range []struct {
		name string
		in   []corev1.Toleration
		want []corev1.Toleration
	}{
		{"none", nil, []corev1.Toleration{notReady, unreachable}},
		{"own not-ready kept", []corev1.Toleration{own}, []corev1.Toleration{own, unreachable}},
		{"tolerate everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{"NoSchedule only does not count", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, notReady, unreachable}},
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.in}}
		if err := New(300, 300).Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pods, Object: pod}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(pod.Spec.Tolerations, tc.want) {
			t.Errorf("%s: got %+v\nwant %+v", tc.name, pod.Spec.Tolerations, tc.want)
		}
	}
	// Subresources and other resources are left alone.
	pod := &corev1.Pod{}
	_ = New(300, 300).Admit(context.Background(), admission.Attributes{Operation: admission.Update, Resource: pods, Subresource: "status", Object: pod})
	if len(pod.Spec.Tolerations) != 0 {
		t.Errorf("status update changed: %+v", pod.Spec.Tolerations)
	}
}
