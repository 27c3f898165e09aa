package autoscaling

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The metric conversions mirror upstream's v1 <-> internal ones; v2's
// metric types are the internal ones.

func metricSpecToV1(in *autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		o := &autoscalingv1.ObjectMetricSource{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			Selector:     s.Metric.Selector,
			AverageValue: s.Target.AverageValue,
		}
		if s.Target.Value != nil {
			o.TargetValue = *s.Target.Value
		}
		out.Object = o
	}
	if s := in.Pods; s != nil {
		p := &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			p.TargetAverageValue = *s.Target.AverageValue
		}
		out.Pods = p
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{
			Name:                     s.Name,
			TargetAverageUtilization: s.Target.AverageUtilization,
			TargetAverageValue:       s.Target.AverageValue,
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{
			Name:                     s.Name,
			Container:                s.Container,
			TargetAverageUtilization: s.Target.AverageUtilization,
			TargetAverageValue:       s.Target.AverageValue,
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{
			MetricName:         s.Metric.Name,
			MetricSelector:     s.Metric.Selector,
			TargetValue:        s.Target.Value,
			TargetAverageValue: s.Target.AverageValue,
		}
	}
	return out
}

func metricSpecFromV1(in *autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		t := autoscalingv2.ValueMetricType
		if s.AverageValue != nil {
			t = autoscalingv2.AverageValueMetricType
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target:          autoscalingv2.MetricTarget{Type: t, Value: quantityPtr(s.TargetValue), AverageValue: s.AverageValue},
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantityPtr(s.TargetAverageValue)},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: utilizationOrValue(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name: s.Name, Container: s.Container, Target: utilizationOrValue(s.TargetAverageUtilization, s.TargetAverageValue),
		}
	}
	if s := in.External; s != nil {
		t := autoscalingv2.ValueMetricType
		if s.TargetValue == nil {
			t = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Target: autoscalingv2.MetricTarget{Type: t, Value: s.TargetValue, AverageValue: s.TargetAverageValue},
		}
	}
	return out
}

// utilizationOrValue is the target of a v1 resource metric: Utilization
// when a utilization is set, AverageValue otherwise.
func utilizationOrValue(utilization *int32, value *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.AverageValueMetricType
	if utilization != nil {
		t = autoscalingv2.UtilizationMetricType
	}
	return autoscalingv2.MetricTarget{Type: t, AverageUtilization: utilization, AverageValue: value}
}

func metricStatusToV1(in *autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		o := &autoscalingv1.ObjectMetricStatus{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			Selector:     s.Metric.Selector,
			AverageValue: s.Current.AverageValue,
		}
		if s.Current.Value != nil {
			o.CurrentValue = *s.Current.Value
		}
		out.Object = o
	}
	if s := in.Pods; s != nil {
		p := &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Current.AverageValue != nil {
			p.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Pods = p
	}
	if s := in.Resource; s != nil {
		r := &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			r.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Resource = r
	}
	if s := in.ContainerResource; s != nil {
		r := &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			r.CurrentAverageValue = *s.Current.AverageValue
		}
		out.ContainerResource = r
	}
	if s := in.External; s != nil {
		e := &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, CurrentAverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			e.CurrentValue = *s.Current.Value
		}
		out.External = e
	}
	return out
}

func metricStatusFromV1(in *autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: quantityPtr(s.CurrentValue), AverageValue: s.AverageValue},
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: quantityPtr(s.CurrentAverageValue)},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{
			Name:    s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageValue: quantityPtr(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization},
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{
			Name:      s.Name,
			Container: s.Container,
			Current:   autoscalingv2.MetricValueStatus{AverageValue: quantityPtr(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization},
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: quantityPtr(s.CurrentValue), AverageValue: s.CurrentAverageValue},
		}
	}
	return out
}

func quantityPtr(q resource.Quantity) *resource.Quantity { return &q }
