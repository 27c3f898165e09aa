package autoscaling

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// full is a v2 autoscaler using every field v1 cannot hold.
func full() *autoscalingv2.HorizontalPodAutoscaler {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	q := resource.MustParse
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "rps", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("100"))},
				}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "hits"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("2k"))},
				}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("30"))},
				}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: corev1.ResourceMemory, Container: "app",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("1Gi"))},
				}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)},
				}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: ptr.To[int32](300),
					SelectPolicy:               ptr.To(autoscalingv2.MinChangePolicySelect),
					Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 60}},
				},
			},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: ptr.To[int64](3),
			LastScaleTime:      &now,
			CurrentReplicas:    4,
			DesiredReplicas:    5,
			CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
					Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](70), AverageValue: ptr.To(q("350m"))},
				}},
			},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
				{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "ReadyForNewScale", Message: "ok"},
			},
		},
	}
}

// TestV1View: what v1 shows of a full v2 autoscaler (upstream's
// internal -> v1 conversion).
func TestV1View(t *testing.T) {
	v1, err := ToV1(full())
	if err != nil {
		t.Fatal(err)
	}
	if got := v1.Spec.TargetCPUUtilizationPercentage; got == nil || *got != 60 {
		t.Errorf("targetCPUUtilizationPercentage %v, want 60", got)
	}
	if got := v1.Status.CurrentCPUUtilizationPercentage; got == nil || *got != 70 {
		t.Errorf("currentCPUUtilizationPercentage %v, want 70", got)
	}
	var others []autoscalingv1.MetricSpec
	if err := json.Unmarshal([]byte(v1.Annotations[MetricSpecsAnnotation]), &others); err != nil {
		t.Fatalf("metrics annotation: %v", err)
	}
	var types []autoscalingv1.MetricSourceType
	for _, m := range others {
		types = append(types, m.Type)
	}
	if diff := cmp.Diff([]autoscalingv1.MetricSourceType{"Pods", "Object", "External", "ContainerResource"}, types); diff != "" {
		t.Errorf("the metrics annotation holds the non-CPU metrics in order (-want +got):\n%s", diff)
	}
	// The behavior annotation is upstream's internal type as JSON: Go
	// field names, null for an unset rule.
	wantBehavior := `{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}],"Tolerance":null}}`
	if got := v1.Annotations[BehaviorSpecsAnnotation]; got != wantBehavior {
		t.Errorf("behavior annotation\n got %s\nwant %s", got, wantBehavior)
	}
	for _, k := range []string{MetricStatusesAnnotation, ConditionsAnnotation, "keep"} {
		if _, ok := v1.Annotations[k]; !ok {
			t.Errorf("annotation %s missing", k)
		}
	}
}

// TestRoundTrip: v2 -> v1 -> v2 loses nothing, and the round-trip
// annotations do not leak into v2.
func TestRoundTrip(t *testing.T) {
	in := full()
	v1, err := ToV1(in)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromV1(v1)
	if err != nil {
		t.Fatal(err)
	}
	// The CPU target comes back last (upstream appends it after the
	// annotation's metrics); in has it last already.
	if !equality.Semantic.DeepEqual(in, back) {
		t.Errorf("round trip changed the object:\n%s", cmp.Diff(in, back))
	}
	if in2 := full(); !equality.Semantic.DeepEqual(in2, in) {
		t.Error("ToV1 changed its input")
	}
}

// TestStaleAnnotationsDropped: round-trip annotations a client sends
// through v2 are not stored, and ones v1 sends malformed are ignored.
func TestStaleAnnotationsDropped(t *testing.T) {
	v1 := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{
			MetricSpecsAnnotation:   "not json",
			BehaviorSpecsAnnotation: "{}",
			ConditionsAnnotation:    "[",
		}},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2, TargetCPUUtilizationPercentage: ptr.To[int32](40)},
	}
	v2, err := FromV1(v1)
	if err != nil {
		t.Fatal(err)
	}
	if len(v2.Annotations) != 0 {
		t.Errorf("annotations %v, want none", v2.Annotations)
	}
	if v2.Spec.Behavior != nil || len(v2.Status.Conditions) != 0 {
		t.Errorf("malformed annotations were used: %+v %+v", v2.Spec.Behavior, v2.Status.Conditions)
	}
	if len(v2.Spec.Metrics) != 1 || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 40 {
		t.Errorf("metrics %+v, want the CPU target only", v2.Spec.Metrics)
	}
	// Converting a v2 object carrying stale annotations to v1 replaces
	// them with the ones conversion computes.
	stale := full()
	stale.Annotations[MetricStatusesAnnotation] = "stale"
	stale.Status.CurrentMetrics = nil
	out, err := ToV1(stale)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Annotations[MetricStatusesAnnotation]; ok {
		t.Error("a stale current-metrics annotation survived conversion to v1")
	}
}

// TestSchemeConversions: the scheme converts both ways with the
// registered functions.
func TestSchemeConversions(t *testing.T) {
	s := runtime.NewScheme()
	if err := autoscalingv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := autoscalingv2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := RegisterConversions(s); err != nil {
		t.Fatal(err)
	}
	obj, err := s.ConvertToVersion(full(), autoscalingv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	v1, ok := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	if !ok || v1.Spec.TargetCPUUtilizationPercentage == nil {
		t.Fatalf("got %T %+v", obj, obj)
	}
	obj, err = s.ConvertToVersion(v1, autoscalingv2.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if v2, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); !ok || len(v2.Spec.Metrics) != 5 {
		t.Fatalf("got %T %+v", obj, obj)
	}
}
