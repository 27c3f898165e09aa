package plugins_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestPodTopologyLabelsOnServer: a pod bound to a Node through
// pods/binding, or created on it with spec.nodeName, gets the Node's
// topology.k8s.io/zone and /region labels (upstream's PodTopologyLabels,
// on by default since v1.35), never over a label the pod has; other Node
// labels are not copied, and binding to a Node that does not exist adds
// nothing.
func TestPodTopologyLabelsOnServer(t *testing.T) {
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	ns := "topo"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-topo", Labels: map[string]string{
		"topology.k8s.io/zone": "z1", "topology.k8s.io/region": "r1",
		"topology.kubernetes.io/zone": "other", "kubernetes.io/hostname": "n-topo",
	}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
	want := func(t *testing.T, name string, labels map[string]string) {
		t.Helper()
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range labels {
			if got, ok := pod.Labels[k]; v == "" && ok || v != "" && got != v {
				t.Errorf("pod %s label %s = %q (present %v), want %q", name, k, got, ok, v)
			}
		}
	}

	t.Run("binding", func(t *testing.T) {
		if _, err := createPod(ctx, cs, ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Spec: spec}); err != nil {
			t.Fatal(err)
		}
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n-topo"}}
		if err := cs.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want(t, "bound", map[string]string{"topology.k8s.io/zone": "z1", "topology.k8s.io/region": "r1",
			"topology.kubernetes.io/zone": "", "kubernetes.io/hostname": ""})
	})
	t.Run("created on the node, keeping its own label", func(t *testing.T) {
		on := spec
		on.NodeName = "n-topo"
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "placed", Labels: map[string]string{"topology.k8s.io/zone": "mine"}}, Spec: on}
		if _, err := createPod(ctx, cs, ns, pod); err != nil {
			t.Fatal(err)
		}
		want(t, "placed", map[string]string{"topology.k8s.io/zone": "mine", "topology.k8s.io/region": "r1"})
	})
	t.Run("unknown node", func(t *testing.T) {
		if _, err := createPod(ctx, cs, ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}, Spec: spec}); err != nil {
			t.Fatal(err)
		}
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}, Target: corev1.ObjectReference{Kind: "Node", Name: "missing"}}
		if err := cs.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want(t, "nowhere", map[string]string{"topology.k8s.io/zone": "", "topology.k8s.io/region": ""})
	})
}
