package autoscaling

import (
	"encoding/json"
	"fmt"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The annotations of a v1 object that hold what only v2 can express.
const (
	MetricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"
	BehaviorSpecsAnnotation  = "autoscaling.alpha.kubernetes.io/behavior"
	MetricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	ConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
)

// DefaultCPUUtilization is the CPU target of an autoscaler without
// metrics, in percent.
const DefaultCPUUtilization = 80

// RegisterConversions registers the conversions between v1 and v2
// HorizontalPodAutoscalers on s.
func RegisterConversions(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil),
		func(a, b any, _ conversion.Scope) error {
			out, err := ToV1(a.(*autoscalingv2.HorizontalPodAutoscaler))
			if err != nil {
				return err
			}
			*b.(*autoscalingv1.HorizontalPodAutoscaler) = *out
			return nil
		}); err != nil {
		return err
	}
	return s.AddConversionFunc((*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil),
		func(a, b any, _ conversion.Scope) error {
			out, err := FromV1(a.(*autoscalingv1.HorizontalPodAutoscaler))
			if err != nil {
				return err
			}
			*b.(*autoscalingv2.HorizontalPodAutoscaler) = *out
			return nil
		})
}

// roundTripAnnotations are the annotations conversion owns.
var roundTripAnnotations = []string{MetricSpecsAnnotation, BehaviorSpecsAnnotation, MetricStatusesAnnotation, ConditionsAnnotation}

// withoutRoundTripAnnotations returns in without the annotations
// conversion owns (a copy if any was there; nil stays nil).
func withoutRoundTripAnnotations(in map[string]string) map[string]string {
	found := false
	for _, k := range roundTripAnnotations {
		if _, ok := in[k]; ok {
			found = true
		}
	}
	if !found {
		return in
	}
	out := maps.Clone(in)
	for _, k := range roundTripAnnotations {
		delete(out, k)
	}
	return out
}

// isCPUUtilization reports whether m is the metric v1's
// targetCPUUtilizationPercentage stands for.
func isCPUUtilization(m *autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// ToV1 converts a v2 HorizontalPodAutoscaler to v1 (a new object; in is
// not changed). TypeMeta is left empty.
func ToV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	c := in.DeepCopy()
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: c.ObjectMeta}
	out.Annotations = withoutRoundTripAnnotations(out.Annotations)
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(c.Spec.ScaleTargetRef),
		MinReplicas:    c.Spec.MinReplicas,
		MaxReplicas:    c.Spec.MaxReplicas,
	}
	for i := range c.Spec.Metrics {
		m := &c.Spec.Metrics[i]
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			if u := m.Resource.Target.AverageUtilization; u != nil {
				out.Spec.TargetCPUUtilizationPercentage = ptr.To(*u)
			}
			break
		}
	}
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: c.Status.ObservedGeneration,
		LastScaleTime:      c.Status.LastScaleTime,
		CurrentReplicas:    c.Status.CurrentReplicas,
		DesiredReplicas:    c.Status.DesiredReplicas,
	}
	for i := range c.Status.CurrentMetrics {
		m := &c.Status.CurrentMetrics[i]
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = ptr.To(*m.Resource.Current.AverageUtilization)
		}
	}

	annotate := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s: %w", key, err)
		}
		// out's annotations are c's, a copy of in's: they may change.
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(b)
		return nil
	}
	var others []autoscalingv1.MetricSpec
	for i := range c.Spec.Metrics {
		if !isCPUUtilization(&c.Spec.Metrics[i]) {
			others = append(others, metricSpecToV1(&c.Spec.Metrics[i]))
		}
	}
	if len(others) > 0 {
		if err := annotate(MetricSpecsAnnotation, others); err != nil {
			return nil, err
		}
	}
	if len(c.Status.CurrentMetrics) > 0 {
		statuses := make([]autoscalingv1.MetricStatus, len(c.Status.CurrentMetrics))
		for i := range c.Status.CurrentMetrics {
			statuses[i] = metricStatusToV1(&c.Status.CurrentMetrics[i])
		}
		if err := annotate(MetricStatusesAnnotation, statuses); err != nil {
			return nil, err
		}
	}
	if c.Spec.Behavior != nil {
		if err := annotate(BehaviorSpecsAnnotation, behaviorToInternal(c.Spec.Behavior)); err != nil {
			return nil, err
		}
	}
	if len(c.Status.Conditions) > 0 {
		conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(c.Status.Conditions))
		for i, cond := range c.Status.Conditions {
			conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
				Type:               autoscalingv1.HorizontalPodAutoscalerConditionType(cond.Type),
				Status:             cond.Status,
				LastTransitionTime: cond.LastTransitionTime,
				Reason:             cond.Reason,
				Message:            cond.Message,
				ObservedGeneration: cond.ObservedGeneration,
			}
		}
		if err := annotate(ConditionsAnnotation, conds); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FromV1 converts a v1 HorizontalPodAutoscaler to v2 (a new object; in is
// not changed): the annotations holding v2-only fields are read back and
// removed; malformed ones are ignored (and removed), as upstream.
func FromV1(in *autoscalingv1.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	c := in.DeepCopy()
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: c.ObjectMeta}
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(c.Spec.ScaleTargetRef),
		MinReplicas:    c.Spec.MinReplicas,
		MaxReplicas:    c.Spec.MaxReplicas,
	}
	if u := c.Spec.TargetCPUUtilizationPercentage; u != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(*u)}
	}
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: c.Status.ObservedGeneration,
		LastScaleTime:      c.Status.LastScaleTime,
		CurrentReplicas:    c.Status.CurrentReplicas,
		DesiredReplicas:    c.Status.DesiredReplicas,
	}
	if u := c.Status.CurrentCPUUtilizationPercentage; u != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{
				Name:    corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(*u)},
			},
		}}
	}
	ann := c.Annotations
	if enc, ok := ann[MetricSpecsAnnotation]; ok {
		var others []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &others); err == nil {
			metrics := make([]autoscalingv2.MetricSpec, 0, len(others)+len(out.Spec.Metrics))
			for i := range others {
				metrics = append(metrics, metricSpecFromV1(&others[i]))
			}
			// The CPU target, if any, comes last, as upstream puts it.
			out.Spec.Metrics = append(metrics, out.Spec.Metrics...)
		}
	}
	if enc, ok := ann[BehaviorSpecsAnnotation]; ok {
		var b internalBehavior
		if err := json.Unmarshal([]byte(enc), &b); err == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = b.toV2()
		}
	}
	if enc, ok := ann[MetricStatusesAnnotation]; ok {
		var statuses []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &statuses); err == nil {
			// These carry more than currentCPUUtilizationPercentage.
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(statuses))
			for i := range statuses {
				out.Status.CurrentMetrics[i] = metricStatusFromV1(&statuses[i])
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		// autoscaling/v1's implicit default, made explicit.
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(DefaultCPUUtilization)}
	}
	if enc, ok := ann[ConditionsAnnotation]; ok {
		var conds []autoscalingv1.HorizontalPodAutoscalerCondition
		if err := json.Unmarshal([]byte(enc), &conds); err == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conds))
			for i, cond := range conds {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
					Type:               autoscalingv2.HorizontalPodAutoscalerConditionType(cond.Type),
					Status:             cond.Status,
					LastTransitionTime: cond.LastTransitionTime,
					Reason:             cond.Reason,
					Message:            cond.Message,
					ObservedGeneration: cond.ObservedGeneration,
				}
			}
		}
	}
	out.Annotations = withoutRoundTripAnnotations(out.Annotations)
	return out, nil
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)},
		},
	}
}

// internalBehavior is the JSON form of upstream's internal
// HorizontalPodAutoscalerBehavior, which the behavior annotation holds:
// its Go field names, no omitempty.
type internalBehavior struct {
	ScaleUp   *internalScalingRules
	ScaleDown *internalScalingRules
}

type internalScalingRules struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []internalScalingPolicy
	Tolerance                  *resource.Quantity
}

type internalScalingPolicy struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToInternal(b *autoscalingv2.HorizontalPodAutoscalerBehavior) internalBehavior {
	conv := func(r *autoscalingv2.HPAScalingRules) *internalScalingRules {
		if r == nil {
			return nil
		}
		out := &internalScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]internalScalingPolicy, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = internalScalingPolicy(p)
			}
		}
		return out
	}
	return internalBehavior{ScaleUp: conv(b.ScaleUp), ScaleDown: conv(b.ScaleDown)}
}

func (b internalBehavior) toV2() *autoscalingv2.HorizontalPodAutoscalerBehavior {
	conv := func(r *internalScalingRules) *autoscalingv2.HPAScalingRules {
		if r == nil {
			return nil
		}
		out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = autoscalingv2.HPAScalingPolicy(p)
			}
		}
		return out
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: conv(b.ScaleUp), ScaleDown: conv(b.ScaleDown)}
}
