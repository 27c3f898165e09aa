package horizontalpodautoscaler

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	conversion "github.com/kapi-dev/kapi/pkg/api/conversion/autoscaling"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func v1HPA(name string) *autoscalingv1.HorizontalPodAutoscaler {
	h := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef:                 autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:                    5,
			TargetCPUUtilizationPercentage: ptr.To[int32](50),
		},
	}
	scheme.Scheme.Default(h)
	return h
}

// TestOneStorageTwoVersions: an autoscaler written through v1 is stored
// as v2 and read through both; v2-only fields written through v2 survive
// an update through v1.
func TestOneStorageTwoVersions(t *testing.T) {
	v2, v2status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Destroy()
	v1 := NewV1REST(v2)
	v1status := NewV1StatusREST(v2status)
	ctx1 := registrytest.Context("autoscaling", "v1", "horizontalpodautoscalers", "ns")
	ctx2 := registrytest.Context("autoscaling", "v2", "horizontalpodautoscalers", "ns")

	obj, err := v1.Create(ctx1, v1HPA("web"), nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*autoscalingv1.HorizontalPodAutoscaler); *got.Spec.MinReplicas != 1 || *got.Spec.TargetCPUUtilizationPercentage != 50 {
		t.Errorf("v1 create returned %+v", got.Spec)
	}
	obj, err = v2.Get(ctx2, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if len(stored.Spec.Metrics) != 1 || *stored.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 {
		t.Fatalf("stored metrics %+v, want the CPU metric at 50%%", stored.Spec.Metrics)
	}

	// v2 adds a Pods metric and a behavior.
	upd := stored.DeepCopy()
	upd.Spec.Metrics = append([]autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))},
	}}}, upd.Spec.Metrics...)
	upd.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
	scheme.Scheme.Default(upd)
	if _, _, err := v2.Update(ctx2, "web", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := stored.Generation; got != 1 {
		t.Errorf("generation %d before the spec change", got)
	}

	// A v1 client reads it (annotations carry what v1 cannot hold), changes
	// maxReplicas and writes it back.
	obj, err = v1.Get(ctx1, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asV1 := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	for _, k := range []string{conversion.MetricSpecsAnnotation, conversion.BehaviorSpecsAnnotation} {
		if asV1.Annotations[k] == "" {
			t.Errorf("v1 view lacks annotation %s", k)
		}
	}
	asV1.Spec.MaxReplicas = 8
	obj, _, err = v1.Update(ctx1, "web", registrytest.Updated{Obj: asV1}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.(*autoscalingv1.HorizontalPodAutoscaler).Spec.MaxReplicas != 8 {
		t.Errorf("v1 update returned %+v", obj)
	}
	obj, err = v2.Get(ctx2, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored = obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if stored.Spec.MaxReplicas != 8 || len(stored.Spec.Metrics) != 2 || stored.Spec.Behavior == nil || *stored.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 60 {
		t.Errorf("after the v1 update the v2 object is %+v", stored.Spec)
	}
	if len(stored.Annotations) != 0 {
		t.Errorf("round-trip annotations were stored: %v", stored.Annotations)
	}
	if stored.Generation != 3 {
		t.Errorf("generation %d, want 3 after two spec changes", stored.Generation)
	}

	// Status through v1's /status.
	obj, _, err = v1status.Update(ctx1, "web", registrytest.Mutated{Mutate: func(o runtime.Object) {
		h := o.(*autoscalingv1.HorizontalPodAutoscaler)
		h.Status.CurrentReplicas, h.Status.DesiredReplicas = 2, 3
		h.Status.CurrentCPUUtilizationPercentage = ptr.To[int32](70)
		h.Spec.MaxReplicas = 99 // ignored by /status
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*autoscalingv1.HorizontalPodAutoscaler); got.Status.CurrentReplicas != 2 || got.Spec.MaxReplicas != 8 {
		t.Errorf("after /status: %+v %+v", got.Spec, got.Status)
	}
	_, _, err = v1status.Update(ctx1, "web", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*autoscalingv1.HorizontalPodAutoscaler).Status.DesiredReplicas = -1
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid status.desiredReplicas" {
		t.Errorf("negative desiredReplicas: %s", got)
	}

	// Validation of v1 writes happens on the v2 object, with v2's paths;
	// the declarative "Required value" of maxReplicas comes last.
	bad := v1HPA("bad")
	bad.Spec.MaxReplicas = 0
	_, err = v1.Create(ctx1, bad, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid spec.maxReplicas,FieldValueRequired spec.maxReplicas" {
		t.Errorf("maxReplicas 0 through v1: %s", got)
	}

	// Lists and watches through v1 hold v1 objects.
	list, err := v1.List(ctx1, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := list.(*autoscalingv1.HorizontalPodAutoscalerList); !ok || len(l.Items) != 1 {
		t.Errorf("v1 list: %T %+v", list, list)
	}
	w, err := v1.Watch(ctx1, &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if _, ok := ev.Object.(*autoscalingv1.HorizontalPodAutoscaler); !ok || ev.Type != watch.Added {
			t.Errorf("v1 watch event %s %T", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}

	// Delete through v1 returns a v1 object or a Status.
	if _, _, err := v1.Delete(ctx1, "web", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestHPATable(t *testing.T) {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Hour))},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "q"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("30"))}}},
			},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: 3,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](42)}}}},
		},
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), h, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printers.go horizontalPodAutoscalerColumnDefinitions.
	if got := strings.Join(names, ","); got != "Name,Reference,Targets,MinPods,MaxPods,Replicas,Age" {
		t.Errorf("columns %s", got)
	}
	want := []any{"web", "Deployment/web", "cpu: 42%/50%, <unknown>/10 + 1 more...", "2", int64(10), int64(3), "3h"}
	for i, w := range want {
		if tbl.Rows[0].Cells[i] != w {
			t.Errorf("cell %s = %#v, want %#v", names[i], tbl.Rows[0].Cells[i], w)
		}
	}
	// A v1 object renders the same when its conversion keeps the metrics'
	// order (the CPU utilization metric last; v1 cannot tell where it was,
	// see V1REST.ConvertToTable).
	h.Spec.Metrics = append(h.Spec.Metrics[1:], h.Spec.Metrics[0])
	h.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{}, {}, h.Status.CurrentMetrics[0]}
	v1, err := conversion.ToV1(h)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = TableConvertor.ConvertToTable(context.Background(), v1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<unknown>/10, <unknown>/30 (avg) + 1 more..."; tbl.Rows[0].Cells[2] != want {
		t.Errorf("v1 TARGETS %#v", tbl.Rows[0].Cells[2])
	}
}

// TestValidationAsDeclarative checks whole error lists, order and words,
// against kube-apiserver v1.37.2, where the beta declarative rules on
// spec.minReplicas (+k8s:minimum, 0 with HPAScaleToZero, beta and on) and
// spec.maxReplicas (+k8s:required, +k8s:minimum=1)
// (k8s.io/kubernetes@v1.37.2 pkg/apis/autoscaling/v1 and v2
// zz_generated.validations.go) replace the handwritten errors and come
// last. The want lists are kube-apiserver v1.37.2's answers to the same
// objects (kubectl create --raw, 2026-11-27), through v2 and v1.
func TestValidationAsDeclarative(t *testing.T) {
	v2, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Destroy()
	v1 := NewV1REST(v2)
	ctx1 := registrytest.Context("autoscaling", "v1", "horizontalpodautoscalers", "ns")
	ctx2 := registrytest.Context("autoscaling", "v2", "horizontalpodautoscalers", "ns")
	for _, c := range []struct {
		name string
		v1   bool
		obj  runtime.Object
		want []string
	}{{
		name: "empty target, zero replicas",
		obj: &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "dv12-hpa1"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](0), MaxReplicas: 0}},
		want: []string{
			`spec.scaleTargetRef.kind: Required value`,
			`spec.scaleTargetRef.name: Required value`,
			`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`,
			`spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas`,
			`spec.maxReplicas: Required value`,
		},
	}, {
		name: "negative replicas",
		obj: &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "dv12-hpa2"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"},
				MinReplicas:    ptr.To[int32](-1), MaxReplicas: -3,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "m"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("1"))},
				}}},
			}},
		want: []string{
			"spec.maxReplicas: Invalid value: -3: must be greater than or equal to `minReplicas`",
			`spec.metrics[0].object.describedObject.kind: Required value`,
			`spec.metrics[0].object.describedObject.name: Required value`,
			`spec.minReplicas: Invalid value: -1: must be greater than or equal to 0`,
			`spec.maxReplicas: Invalid value: -3: must be greater than or equal to 1`,
		},
	}, {
		name: "v1 maxReplicas 0 below minReplicas",
		v1:   true,
		obj: &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "dv12-hpa3"},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"},
				MinReplicas:    ptr.To[int32](5), MaxReplicas: 0, TargetCPUUtilizationPercentage: ptr.To[int32](-1),
			}},
		want: []string{
			"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
			`spec.metrics[0].resource.target.averageUtilization: Invalid value: -1: must be greater than 0`,
			`spec.maxReplicas: Required value`,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.v1 {
				_, err = v1.Create(ctx1, c.obj, nil, &metav1.CreateOptions{})
			} else {
				_, err = v2.Create(ctx2, c.obj, nil, &metav1.CreateOptions{})
			}
			if got := registrytest.Messages(t, err); !slices.Equal(got, c.want) {
				t.Errorf("causes:\n got  %q\n want %q", got, c.want)
			}
		})
	}
}
