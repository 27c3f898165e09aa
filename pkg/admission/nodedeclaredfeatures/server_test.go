package nodedeclaredfeatures_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestPodLevelResizeOnServer resizes the pod-level resources of a pod bound
// to a Node through a real server with the default plugins. Recorded from
// kube-apiserver v1.37.2 (session 18) for the same requests: 403
// `pods "pl" is forbidden: pod update requires features
// InPlacePodLevelResourcesVerticalScaling which are not available on node
// "n"` while the Node declares nothing; accepted once it declares the
// feature (and has the allocatable PodResizeValidator wants).
func TestPodLevelResizeOnServer(t *testing.T) {
	s := kapitest.Start(t, kapitest.WithFlags("--disable-admission-plugins=ServiceAccount"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()

	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pl"},
		Spec: corev1.PodSpec{
			NodeName: "n",
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
			},
			Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resize := func() error {
		_, err := cs.CoreV1().Pods("default").Patch(ctx, "pl", types.StrategicMergePatchType,
			[]byte(`{"spec":{"resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"200m"}}}}`), metav1.PatchOptions{}, "resize")
		return err
	}
	const want = `pods "pl" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "n"`
	var status apierrors.APIStatus
	if err := resize(); !errors.As(err, &status) || status.Status().Code != 403 || status.Status().Message != want {
		t.Fatalf("resize on a node without the feature: got %v, want 403 %q", err, want)
	}

	node.Status.DeclaredFeatures = []string{"InPlacePodLevelResourcesVerticalScaling"}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := resize(); err != nil {
		t.Fatalf("resize on a node declaring the feature: %v", err)
	}
	pod, err := cs.CoreV1().Pods("default").Get(ctx, "pl", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.Resources.Requests[corev1.ResourceCPU]; got.String() != "150m" {
		t.Errorf("pod-level cpu request %s after the resize, want 150m", got.String())
	}
}
