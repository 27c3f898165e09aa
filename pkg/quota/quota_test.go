package quota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// TestPodUsage follows upstream's pod evaluator tests
// (pkg/quota/v1/evaluator/core/pods_test.go, v1.37): containers summed,
// init containers as a maximum, sidecars summed, overhead added,
// terminal pods count in count/pods only.
func TestPodUsage(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	now := time.Now()
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.ResourceList
	}{
		{"best effort", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
			rl("count/pods", "1", "pods", "1")},
		{"containers summed", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", rl("cpu", "100m", "memory", "1Gi"), rl("cpu", "200m", "memory", "2Gi")),
			container("b", rl("cpu", "300m"), nil),
		}}}, rl("count/pods", "1", "pods", "1", "cpu", "400m", "requests.cpu", "400m", "limits.cpu", "200m", "memory", "1Gi", "requests.memory", "1Gi", "limits.memory", "2Gi")},
		{"init container max", &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container("i", rl("cpu", "1"), nil)},
			Containers:     []corev1.Container{container("a", rl("cpu", "100m"), nil), container("b", rl("cpu", "100m"), nil)},
		}}, rl("count/pods", "1", "pods", "1", "cpu", "1", "requests.cpu", "1")},
		{"sidecar summed", &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "s", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "200m")}},
				container("i", rl("cpu", "250m"), nil),
			},
			Containers: []corev1.Container{container("a", rl("cpu", "100m"), nil)},
		}}, rl("count/pods", "1", "pods", "1", "cpu", "450m", "requests.cpu", "450m")},
		{"overhead", &corev1.Pod{Spec: corev1.PodSpec{
			Overhead:   rl("cpu", "10m"),
			Containers: []corev1.Container{container("a", rl("cpu", "100m"), rl("cpu", "100m"))},
		}}, rl("count/pods", "1", "pods", "1", "cpu", "110m", "requests.cpu", "110m", "limits.cpu", "110m")},
		{"extended and hugepages", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", rl("example.com/gpu", "2", "hugepages-2Mi", "4Mi"), nil),
		}}}, rl("count/pods", "1", "pods", "1", "requests.example.com/gpu", "2", "hugepages-2Mi", "4Mi", "requests.hugepages-2Mi", "4Mi")},
		{"succeeded", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", rl("cpu", "1"), nil)}},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, rl("count/pods", "1")},
		{"past its grace period", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			DeletionTimestamp: ptr.To(metav1.NewTime(now.Add(-time.Minute))), DeletionGracePeriodSeconds: ptr.To[int64](30)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", rl("cpu", "1"), nil)}}}, rl("count/pods", "1")},
	}
	ev := For(schema.GroupResource{Resource: "pods"})
	for _, tc := range tests {
		got, err := ev.Usage(tc.pod, now)
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(got, tc.want) {
			t.Errorf("%s: usage %s, want %s", tc.name, PrettyPrint(got), PrettyPrint(tc.want))
		}
	}
}

// TestOtherUsage: services (upstream's services.go: node ports and load
// balancers), claims (persistent_volume_claims.go: rounded storage, per
// class) and object counts.
func TestOtherUsage(t *testing.T) {
	ports := []corev1.ServicePort{{Port: 80}, {Port: 443, NodePort: 30443}}
	tests := []struct {
		gr   schema.GroupResource
		obj  runtime.Object
		want corev1.ResourceList
	}{
		{schema.GroupResource{Resource: "services"}, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports}},
			rl("count/services", "1", "services", "1")},
		{schema.GroupResource{Resource: "services"}, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}},
			rl("count/services", "1", "services", "1", "services.nodeports", "2")},
		{schema.GroupResource{Resource: "services"}, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports, AllocateLoadBalancerNodePorts: ptr.To(false)}},
			rl("count/services", "1", "services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
		{schema.GroupResource{Resource: "persistentvolumeclaims"}, &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("gold"), Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1500m")}}},
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "2",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "2")},
		{schema.GroupResource{Resource: "configmaps"}, &corev1.ConfigMap{}, rl("count/configmaps", "1", "configmaps", "1")},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, &corev1.ConfigMap{}, rl("count/deployments.apps", "1")},
	}
	for _, tc := range tests {
		got, err := For(tc.gr).Usage(tc.obj, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(got, tc.want) {
			t.Errorf("%s %T: usage %s, want %s", tc.gr, tc.obj, PrettyPrint(got), PrettyPrint(tc.want))
		}
	}
}

// TestScopes: upstream's podMatchesScopeFunc; object counts match no scope.
func TestScopes(t *testing.T) {
	bestEffort := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}
	burstable := &corev1.Pod{Spec: corev1.PodSpec{ActiveDeadlineSeconds: ptr.To[int64](60), PriorityClassName: "high",
		Containers: []corev1.Container{container("a", rl("cpu", "1"), nil)}}}
	quota := func(scopes []corev1.ResourceQuotaScope, sel *corev1.ScopeSelector) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: scopes, ScopeSelector: sel},
			Status: corev1.ResourceQuotaStatus{Hard: rl("pods", "10", "count/configmaps", "10")}}
	}
	pods := For(schema.GroupResource{Resource: "pods"})
	tests := []struct {
		name string
		q    *corev1.ResourceQuota
		pod  *corev1.Pod
		want bool
	}{
		{"no scope", quota(nil, nil), bestEffort, true},
		{"BestEffort", quota([]corev1.ResourceQuotaScope{"BestEffort"}, nil), bestEffort, true},
		{"BestEffort burstable", quota([]corev1.ResourceQuotaScope{"BestEffort"}, nil), burstable, false},
		{"NotBestEffort", quota([]corev1.ResourceQuotaScope{"NotBestEffort"}, nil), burstable, true},
		{"Terminating", quota([]corev1.ResourceQuotaScope{"Terminating"}, nil), burstable, true},
		{"NotTerminating", quota([]corev1.ResourceQuotaScope{"NotTerminating"}, nil), burstable, false},
		{"NotTerminating BestEffort", quota([]corev1.ResourceQuotaScope{"NotTerminating", "BestEffort"}, nil), bestEffort, true},
		{"PriorityClass In", quota(nil, &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "In", Values: []string{"high"}}}}), burstable, true},
		{"PriorityClass NotIn", quota(nil, &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "NotIn", Values: []string{"high"}}}}), burstable, false},
		{"PriorityClass Exists", quota(nil, &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "Exists"}}}), bestEffort, false},
	}
	for _, tc := range tests {
		got, err := Matches(tc.q, tc.pod, pods)
		if err != nil || got != tc.want {
			t.Errorf("%s: matches %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
	cms := For(schema.GroupResource{Resource: "configmaps"})
	if ok, _ := Matches(quota([]corev1.ResourceQuotaScope{"NotTerminating"}, nil), &corev1.ConfigMap{}, cms); ok {
		t.Error("a scoped quota counts configmaps")
	}
	if ok, _ := Matches(quota(nil, nil), &corev1.ConfigMap{}, cms); !ok {
		t.Error("an unscoped quota does not count configmaps")
	}
}

// TestPodConstraints: upstream's message for containers missing what a
// cpu or memory quota tracks.
func TestPodConstraints(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{container("init", rl("cpu", "1"), nil)},
		Containers:     []corev1.Container{container("a", nil, nil), container("b", rl("memory", "1Gi"), nil)},
	}}
	err := For(schema.GroupResource{Resource: "pods"}).Constraints([]corev1.ResourceName{"requests.cpu", "requests.memory", "pods"}, pod)
	if want := "must specify requests.cpu for: a,b; requests.memory for: a,init"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
