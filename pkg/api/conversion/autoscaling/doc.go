// Package autoscaling converts HorizontalPodAutoscalers between
// autoscaling/v1 and autoscaling/v2, as kube-apiserver does through its
// internal version (pkg/apis/autoscaling/v1/conversion.go, v1.37):
//
//   - v1's spec.targetCPUUtilizationPercentage is v2's CPU Resource metric
//     with an averageUtilization target; v1's status
//     currentCPUUtilizationPercentage is the CPU Resource current metric;
//   - what v1 cannot hold is kept in annotations of the v1 object, so that
//     a v1 client's update does not lose it: the other metrics
//     (autoscaling.alpha.kubernetes.io/metrics, as v1 MetricSpecs), the
//     behavior (autoscaling.alpha.kubernetes.io/behavior, as upstream's
//     internal type serializes it: Go field names), the current metrics
//     (autoscaling.alpha.kubernetes.io/current-metrics) and the conditions
//     (autoscaling.alpha.kubernetes.io/conditions);
//   - converting to v2 reads those annotations back and removes them; a v1
//     object without any metric gets upstream's implicit default, CPU at
//     80% utilization.
//
// [RegisterConversions] teaches a scheme both directions, so that
// managed fields recorded through one version are kept when the object
// is written through the other.
package autoscaling
