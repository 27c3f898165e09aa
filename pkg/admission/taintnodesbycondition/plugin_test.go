package taintnodesbycondition

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// Cases after upstream's plugin/pkg/admission/nodetaint admission_test.go.
func TestAdmit(t *testing.T) {
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	other := corev1.Taint{Key: "foo", Value: "bar", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name string
		in   []corev1.Taint
		want []corev1.Taint
	}{
		{"new node", nil, []corev1.Taint{notReady}},
		{"already tainted", []corev1.Taint{notReady}, []corev1.Taint{notReady}},
		{"other taints kept", []corev1.Taint{other}, []corev1.Taint{other, notReady}},
	} {
		n := &corev1.Node{Spec: corev1.NodeSpec{Taints: tc.in}}
		if err := New().Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: nodes, Object: n}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(n.Spec.Taints, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, n.Spec.Taints, tc.want)
		}
	}
	if New().Handles(admission.Update) {
		t.Errorf("handles updates; upstream taints only at creation")
	}
	err := New().Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: nodes, Name: "n", Object: &corev1.Pod{}})
	if err == nil || err.Error() != `nodes "n" is forbidden: unexpected type *v1.Pod` {
		t.Errorf("wrong type: got %v", err)
	}
}
