package nodedeclaredfeatures

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

type nodes map[string]*corev1.Node

func (n nodes) Get(_ context.Context, _, name string) (runtime.Object, error) {
	if node, ok := n[name]; ok {
		return node, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
}

func basePod() *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	limit := resource.MustParse("64Mi")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 1},
		Spec: corev1.PodSpec{
			NodeName:  "n",
			Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			InitContainers: []corev1.Container{
				{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
				{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
			},
			Containers: []corev1.Container{{Name: "c"}},
			Volumes: []corev1.Volume{{Name: "mem", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}},
		},
	}
}

// TestRequired checks which features an update needs, per upstream's
// framework (k8s.io/component-helpers nodedeclaredfeatures v0.37.2: the
// inplacepodresize features' InferForUpdate).
func TestRequired(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*corev1.Pod)
		want   []string
	}{
		{"nothing", func(*corev1.Pod) {}, nil},
		{"a container's resources", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, nil},
		{"a sidecar's resources", func(p *corev1.Pod) {
			p.Spec.InitContainers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		}, nil},
		{"an init container's resources", func(p *corev1.Pod) {
			p.Spec.InitContainers[1].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		}, []string{InitContainersResize}},
		{"the same quantity written another way", func(p *corev1.Pod) {
			p.Spec.InitContainers[1].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1")
		}, nil},
		{"pod-level resources", func(p *corev1.Pod) {
			p.Spec.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		}, []string{PodLevelResourcesResize}},
		{"pod-level resources and a memory volume", func(p *corev1.Pod) {
			p.Spec.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
			l := resource.MustParse("128Mi")
			p.Spec.Volumes[0].EmptyDir.SizeLimit = &l
			p.Spec.InitContainers[1].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		}, []string{PodLevelResourcesResize, InitContainersResize, MemoryBackedVolumesResize}},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, pod := basePod(), basePod()
			c.change(pod)
			if got := Required(old, pod); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestValidate checks the answers: upstream's 403 messages (its
// admission.go, v1.37.2) for a missing node and missing features.
func TestValidate(t *testing.T) {
	p := New(nodes{
		"n":    {ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		"good": {ObjectMeta: metav1.ObjectMeta{Name: "good"}, Status: corev1.NodeStatus{DeclaredFeatures: []string{PodLevelResourcesResize, "Other"}}},
	})
	attrs := func(old, pod *corev1.Pod, sub string) admission.Attributes {
		return admission.Attributes{Operation: admission.Update, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
			Subresource: sub, Namespace: "ns", Name: "p", Object: pod, OldObject: old}
	}
	resized := func(node string) (*corev1.Pod, *corev1.Pod) {
		old, pod := basePod(), basePod()
		old.Spec.NodeName, pod.Spec.NodeName = node, node
		pod.Spec.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		pod.Generation = 2
		return old, pod
	}
	forbidden := func(err error, want string) {
		t.Helper()
		var s apierrors.APIStatus
		if !errors.As(err, &s) || s.Status().Code != 403 || s.Status().Message != want {
			t.Fatalf("got %v, want 403 %q", err, want)
		}
	}

	old, pod := resized("n")
	forbidden(p.Validate(context.Background(), attrs(old, pod, "resize")),
		`pods "p" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "n"`)
	old, pod = resized("absent")
	forbidden(p.Validate(context.Background(), attrs(old, pod, "resize")), `pods "p" is forbidden: node "absent" not found`)
	old, pod = resized("good")
	if err := p.Validate(context.Background(), attrs(old, pod, "resize")); err != nil {
		t.Fatalf("declared feature: %v", err)
	}
	old, pod = resized("n")
	pod.Generation = 1 // no spec change seen
	if err := p.Validate(context.Background(), attrs(old, pod, "resize")); err != nil {
		t.Fatalf("same generation: %v", err)
	}
	old, pod = resized("n")
	if err := p.Validate(context.Background(), attrs(old, pod, "status")); err != nil {
		t.Fatalf("status subresource: %v", err)
	}
	old, pod = resized("")
	if err := p.Validate(context.Background(), attrs(old, pod, "")); err != nil {
		t.Fatalf("unbound pod: %v", err)
	}
}
