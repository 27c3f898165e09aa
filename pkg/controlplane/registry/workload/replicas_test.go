package workload

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Unset spec replicas read as 0; SetReplicas sets them; another type is
// an error, not a panic.
func TestReplicasAccessor(t *testing.T) {
	a := ReplicasAccessor[*appsv1.ReplicaSet]{
		Kind: "replicaset",
		Fields: func(rs *appsv1.ReplicaSet) (**int32, int32, *metav1.LabelSelector) {
			return &rs.Spec.Replicas, rs.Status.Replicas, rs.Spec.Selector
		},
	}
	rs := &appsv1.ReplicaSet{
		Spec:   appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}},
		Status: appsv1.ReplicaSetStatus{Replicas: 2},
	}
	spec, status, sel, err := a.Replicas(rs)
	if err != nil || spec != 0 || status != 2 || sel != "app=x" {
		t.Errorf("Replicas = %d, %d, %q, %v; want 0, 2, app=x, nil", spec, status, sel, err)
	}
	if err := a.SetReplicas(rs, 5); err != nil || rs.Spec.Replicas == nil || *rs.Spec.Replicas != 5 {
		t.Errorf("SetReplicas: %v, replicas %v", err, rs.Spec.Replicas)
	}
	if spec, _, _, _ := a.Replicas(rs); spec != 5 {
		t.Errorf("Replicas after set = %d, want 5", spec)
	}
	if _, _, _, err := a.Replicas(&corev1.Pod{}); err == nil || err.Error() != "not a replicaset: *v1.Pod" {
		t.Errorf("Replicas(pod) error %v", err)
	}
	if err := a.SetReplicas(&corev1.Pod{}, 1); err == nil {
		t.Error("SetReplicas(pod) succeeded")
	}
}
