package node

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func node(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24"}},
		Status: corev1.NodeStatus{
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.0"},
		},
	}
}

func TestNodeStore(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "nodes", "")
	if store.NamespaceScoped() || !slices.Equal(store.ShortNames(), []string{"no"}) || store.GetSingularName() != "node" {
		t.Errorf("got namespaced %t, short names %v, singular %q; want cluster-scoped, [no], node",
			store.NamespaceScoped(), store.ShortNames(), store.GetSingularName())
	}
	// A node is created with its status (kubelets register that way).
	n := node("worker-1")
	n.Spec.ConfigSource = &corev1.NodeConfigSource{}
	obj, err := store.Create(ctx, n, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	created := obj.(*corev1.Node)
	if len(created.Status.Conditions) != 1 || created.Status.NodeInfo.KubeletVersion != "v1.37.0" {
		t.Errorf("got status %+v, want the status created with", created.Status)
	}
	if created.Spec.ConfigSource != nil {
		t.Errorf("got spec.configSource %v, want it dropped on create", created.Spec.ConfigSource)
	}
	if created.Generation != 0 {
		t.Errorf("got generation %d, want none (nodes have no generation)", created.Generation)
	}
	// The main resource keeps the stored status.
	upd := created.DeepCopy()
	upd.Spec.Unschedulable = true
	upd.Status.NodeInfo.KubeletVersion = "v9"
	obj, _, err = store.Update(ctx, "worker-1", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if got := obj.(*corev1.Node); !got.Spec.Unschedulable || got.Status.NodeInfo.KubeletVersion != "v1.37.0" {
		t.Errorf("got unschedulable %t, kubelet %q; want the spec changed and the status kept", got.Spec.Unschedulable, got.Status.NodeInfo.KubeletVersion)
	}
	// /status keeps the spec.
	upd = obj.(*corev1.Node).DeepCopy()
	upd.Spec.Unschedulable = false
	upd.Status.Conditions[0].Status = corev1.ConditionFalse
	obj, _, err = status.Update(ctx, "worker-1", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	if got := obj.(*corev1.Node); !got.Spec.Unschedulable || got.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("got unschedulable %t, Ready %s; want the spec kept and the status changed", got.Spec.Unschedulable, got.Status.Conditions[0].Status)
	}
	// Pod CIDRs may not change once set.
	upd = obj.(*corev1.Node).DeepCopy()
	upd.Spec.PodCIDRs = []string{"10.244.2.0/24"}
	_, _, err = store.Update(ctx, "worker-1", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueForbidden spec.podCIDRs"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	// Field selector spec.unschedulable.
	if _, err := store.Create(ctx, node("worker-2"), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sel, err := fields.ParseSelector("spec.unschedulable=true")
	if err != nil {
		t.Fatal(err)
	}
	list, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*corev1.NodeList).Items; len(items) != 1 || items[0].Name != "worker-1" {
		t.Errorf("got %d nodes for spec.unschedulable=true, want worker-1 only", len(items))
	}
}

func TestNodeTable(t *testing.T) {
	n := node("worker-1")
	n.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
	n.Labels = map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master", "node-role.kubernetes.io/": "x"}
	n.Spec.Unschedulable = true
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.2.3.4"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}
	n.Status.NodeInfo.OSImage = "Ubuntu 24.04"
	bare := node("bare")
	bare.Status = corev1.NodeStatus{}
	// kube-apiserver v1.37.2 printed KERNEL-VERSION "6.8.0 (amd64)" for
	// this nodeInfo (kubectl get node -o wide on the reference,
	// 2026-11-27) and "<unknown> (arm64)" with an architecture only.
	full := node("full")
	full.Status = corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.8.0", Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.0.0"}}
	arch := node("arch")
	arch.Status = corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{Architecture: "arm64"}}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), &corev1.NodeList{Items: []corev1.Node{*n, *bare, *full, *arch}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
		if wide := c.Priority == 1; wide != slices.Contains([]string{"Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}, c.Name) {
			t.Errorf("column %s: priority %d", c.Name, c.Priority)
		}
	}
	// Upstream's printNode columns (pkg/printers/internalversion/printers.go).
	if want := []string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}; !slices.Equal(names, want) {
		t.Errorf("got columns %v, want %v", names, want)
	}
	want := [][]any{
		{"worker-1", "Ready,SchedulingDisabled", "control-plane,master", "3h", "v1.37.0", "10.0.0.5", "1.2.3.4", "Ubuntu 24.04", "<unknown>", "<unknown>"},
		{"bare", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		{"full", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "6.8.0 (amd64)", "containerd://2.0.0"},
		{"arch", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown> (arm64)", "<unknown>"},
	}
	if len(tbl.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(tbl.Rows), len(want))
	}
	for i, row := range tbl.Rows {
		if !slices.Equal(row.Cells, want[i]) {
			t.Errorf("row %d: got %v, want %v", i, row.Cells, want[i])
		}
	}
}
