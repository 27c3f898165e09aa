package podresize_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestResizeOnServer runs the default plugin set on a real server and
// resizes pods bound to nodes that are missing, too small or not linux.
// Expected answers recorded from kube-apiserver v1.37.2 (session 18) for
// the same requests: 403 Forbidden `pods "<pod>" is forbidden: <message>`,
// with one cause of the given type (none for a missing node).
func TestResizeOnServer(t *testing.T) {
	s := kapitest.Start(t, kapitest.WithFlags("--disable-admission-plugins=ServiceAccount"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	const ns = "default"

	pod := func(name, node string) {
		t.Helper()
		q := resource.MustParse("100m")
		m := resource.MustParse("64Mi")
		rl := corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: m}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resize := func(name, cpu, mem string) error {
		patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}]}}`, cpu, mem, cpu, mem)
		_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
		return err
	}
	node := func(name string, labels map[string]string, alloc corev1.ResourceList) {
		t.Helper()
		n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Allocatable = alloc
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	forbidden := func(err error, message string, cause metav1.CauseType) {
		t.Helper()
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code != 403 || status.Status().Message != message {
			t.Fatalf("got %v, want 403 %q", err, message)
		}
		var causes []metav1.CauseType
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				causes = append(causes, c.Type)
			}
		}
		if want := []metav1.CauseType{cause}; cause == "" && len(causes) != 0 || cause != "" && (len(causes) != 1 || causes[0] != cause) {
			t.Fatalf("causes %v, want %v", causes, want)
		}
	}

	pod("a", "node-a")
	pod("b", "node-b")
	pod("c", "node-c")
	pod("unbound", "")

	// No spec change: the generation stays, nothing is checked.
	if err := resize("a", "100m", "64Mi"); err != nil {
		t.Fatalf("resize without a change: %v", err)
	}
	forbidden(resize("a", "200m", "64Mi"), `pods "a" is forbidden: node "node-a" not found`, "")
	// A pod bound to no node is not checked.
	if err := resize("unbound", "200m", "64Mi"); err != nil {
		t.Fatalf("resize of an unbound pod: %v", err)
	}

	node("node-a", nil, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")})
	node("node-b", map[string]string{corev1.LabelOSStable: "windows"}, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	node("node-c", nil, nil)

	if err := resize("a", "200m", "64Mi"); err != nil {
		t.Fatalf("resize that fits: %v", err)
	}
	forbidden(resize("a", "1500m", "2Gi"), `pods "a" is forbidden: node didn't have enough allocatable resources: `+
		`cpu, requested: 1500, allocatable: 1000; memory, requested: 2147483648, allocatable: 1073741824`, "NodeCapacity")
	forbidden(resize("a", "1500m", "64Mi"), `pods "a" is forbidden: node didn't have enough allocatable resources: cpu, requested: 1500, allocatable: 1000`, "NodeCapacity")
	forbidden(resize("b", "200m", "64Mi"), `pods "b" is forbidden: pod resize is only supported on linux nodes, node "node-b" is "windows"`, "UnsupportedPlatform")
	forbidden(resize("c", "200m", "64Mi"), `pods "c" is forbidden: node didn't have enough allocatable resources: `+
		`cpu, requested: 200, allocatable: 0; memory, requested: 67108864, allocatable: 0`, "NodeCapacity")
}
