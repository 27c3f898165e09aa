package autoscaling

import (
	"encoding/json"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// FuzzConversion converts arbitrary v1 and v2 autoscalers (annotations
// included, which clients control) both ways: never a panic, and a v2
// object survives v2 -> v1 -> v2 with its metrics (but for a second CPU
// utilization target, which v1 cannot hold).
func FuzzConversion(f *testing.F) {
	f.Add([]byte(`{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Pods\"},{\"type\":\"Object\",\"object\":{}}]"}},"spec":{"maxReplicas":1}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/behavior":"{\"ScaleUp\":{\"Policies\":null}}","autoscaling.alpha.kubernetes.io/current-metrics":"[{}]"}}}`))
	f.Add([]byte(`{"spec":{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"averageUtilization":5}}},{"type":"External"}]},"status":{"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{}}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v1 := &autoscalingv1.HorizontalPodAutoscaler{}
		if json.Unmarshal(data, v1) == nil {
			if _, err := FromV1(v1); err != nil {
				t.Fatalf("FromV1: %v", err)
			}
		}
		v2 := &autoscalingv2.HorizontalPodAutoscaler{}
		if json.Unmarshal(data, v2) != nil {
			return
		}
		asV1, err := ToV1(v2)
		if err != nil {
			t.Fatalf("ToV1: %v", err)
		}
		back, err := FromV1(asV1)
		if err != nil {
			t.Fatalf("FromV1 of ToV1: %v", err)
		}
		// v1 holds one CPU utilization target: extra ones are lost, as
		// upstream.
		want, cpu := 0, 0
		for i := range v2.Spec.Metrics {
			if isCPUUtilization(&v2.Spec.Metrics[i]) {
				cpu++
			} else {
				want++
			}
		}
		want += min(cpu, 1)
		if want > 0 && len(back.Spec.Metrics) != want {
			t.Errorf("%d metrics came back as %d, want %d", len(v2.Spec.Metrics), len(back.Spec.Metrics), want)
		}
	})
}
