package limitranger

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// ranges is a Lister over fixed LimitRanges.
type ranges []corev1.LimitRange

func (r ranges) List(context.Context, string) (runtime.Object, error) {
	return &corev1.LimitRangeList{Items: r}, nil
}

var (
	pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pvcs = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(name string, req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "x", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func TestAdmitDefaults(t *testing.T) {
	p := New(ranges{{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        rl("cpu", "500m", "memory", "256Mi"),
		DefaultRequest: rl("cpu", "100m", "memory", "128Mi"),
	}}}}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		Containers:     []corev1.Container{container("a", rl("cpu", "200m"), nil), container("b", nil, nil)},
		InitContainers: []corev1.Container{container("i", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))},
	}}
	if err := p.Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pods, Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Object: pod}); err != nil {
		t.Fatal(err)
	}
	a := pod.Spec.Containers[0].Resources
	if a.Requests.Cpu().String() != "200m" || a.Requests.Memory().String() != "128Mi" || a.Limits.Cpu().String() != "500m" {
		t.Errorf("container a: %+v", a)
	}
	// Annotation format: upstream mergePodResourceRequirements.
	want := "LimitRanger plugin set: memory request for container a; cpu, memory limit for container a; " +
		"cpu, memory request for container b; cpu, memory limit for container b"
	if got := pod.Annotations[Annotation]; got != want {
		t.Errorf("annotation\n got %q\nwant %q", got, want)
	}
	// Pod updates are not mutated (containers are immutable).
	upd := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", nil, nil)}}}
	_ = p.Admit(context.Background(), admission.Attributes{Operation: admission.Update, Resource: pods, Object: upd, OldObject: upd.DeepCopy()})
	if len(upd.Spec.Containers[0].Resources.Requests) != 0 {
		t.Errorf("update mutated: %+v", upd.Spec.Containers[0].Resources)
	}
}

// TestValidate checks upstream's messages
// (plugin/pkg/admission/limitranger/admission.go, minConstraint,
// maxConstraint, limitRequestRatioConstraint, maxRequestConstraint).
func TestValidate(t *testing.T) {
	containerRange := corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:                 corev1.LimitTypeContainer,
		Min:                  rl("cpu", "100m"),
		Max:                  rl("memory", "1Gi"),
		MaxLimitRequestRatio: rl("cpu", "2"),
	}}}}
	podRange := corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypePod, Max: rl("cpu", "1"),
	}}}}
	pvcRange := corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi"),
	}}}}
	for _, tc := range []struct {
		name   string
		ranges ranges
		gvr    schema.GroupVersionResource
		obj    runtime.Object
		want   string
	}{
		{"ok", ranges{containerRange}, pods, podWith(container("c", rl("cpu", "100m", "memory", "1Gi"), rl("cpu", "200m", "memory", "1Gi"))), ""},
		{"below min", ranges{containerRange}, pods, podWith(container("c", rl("cpu", "50m"), rl("cpu", "100m", "memory", "1Gi"))),
			`pods "p" is forbidden: minimum cpu usage per Container is 100m, but request is 50m`},
		{"no request", ranges{containerRange}, pods, podWith(container("c", nil, rl("memory", "1Gi"))),
			`pods "p" is forbidden: [minimum cpu usage per Container is 100m.  No request is specified, cpu max limit to request ratio per Container is 2, but no request is specified or request is 0]`},
		{"no limit", ranges{containerRange}, pods, podWith(container("c", rl("cpu", "100m"), rl("cpu", "100m"))),
			`pods "p" is forbidden: maximum memory usage per Container is 1Gi.  No limit is specified`},
		{"above max", ranges{containerRange}, pods, podWith(container("c", rl("cpu", "100m"), rl("cpu", "100m", "memory", "2Gi"))),
			`pods "p" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi`},
		{"ratio", ranges{containerRange}, pods, podWith(container("c", rl("cpu", "100m"), rl("cpu", "300m", "memory", "1Gi"))),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000`},
		{"pod total", ranges{podRange}, pods, podWith(container("a", rl("cpu", "600m"), rl("cpu", "600m")), container("b", rl("cpu", "600m"), rl("cpu", "600m"))),
			`pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m`},
		{"pvc below min", ranges{pvcRange}, pvcs, pvcWith("500Mi"),
			`persistentvolumeclaims "c" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`},
		{"pvc above max", ranges{pvcRange}, pvcs, pvcWith("20Gi"),
			`persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`},
		{"pvc ok", ranges{pvcRange}, pvcs, pvcWith("5Gi"), ""},
	} {
		err := New(tc.ranges).Validate(context.Background(), admission.Attributes{Operation: admission.Create, Resource: tc.gvr, Object: tc.obj})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func podWith(cs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: cs}}
}

func pvcWith(size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{
		Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", size)},
	}}
}
