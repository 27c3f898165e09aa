package node

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var (
	nodeInfoDoc = corev1.NodeSystemInfo{}.SwaggerDoc()
	statusDoc   = corev1.NodeStatus{}.SwaggerDoc()
)

// Role labels, as upstream's printer reads them.
const (
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	labelNodeRole       = "kubernetes.io/role"
)

// TableConvertor renders nodes as upstream's printNode (kubernetes
// pkg/printers/internalversion/printers.go): NAME STATUS ROLES AGE
// VERSION, and INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION
// CONTAINER-RUNTIME with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		table.AgeColumn,
		{Name: "Version", Type: "string", Description: nodeInfoDoc["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: statusDoc["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: statusDoc["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: nodeInfoDoc["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: nodeInfoDoc["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: nodeInfoDoc["containerRuntimeVersion"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return nil, false
		}
		roles := strings.Join(nodeRoles(n), ",")
		if roles == "" {
			roles = "<none>"
		}
		info := n.Status.NodeInfo
		return []any{n.Name, nodeStatus(n), roles, table.Since(n.CreationTimestamp), info.KubeletVersion,
			address(n, corev1.NodeInternalIP), address(n, corev1.NodeExternalIP),
			orUnknown(info.OSImage), kernelVersion(info), orUnknown(info.ContainerRuntimeVersion)}, true
	},
}

// kernelVersion is the kernel version ("<unknown>" if unset) followed by
// " (<architecture>)" when the architecture is known, as upstream's
// printNode.
func kernelVersion(info corev1.NodeSystemInfo) string {
	v := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		v += " (" + info.Architecture + ")"
	}
	return v
}

// nodeStatus is "Ready", "NotReady" or "Unknown" (no Ready condition),
// followed by ",SchedulingDisabled" for a cordoned node.
func nodeStatus(n *corev1.Node) string {
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		// The last Ready condition wins, as upstream's condition map.
		if c.Status == corev1.ConditionTrue {
			status = string(corev1.NodeReady)
		} else {
			status = "Not" + string(corev1.NodeReady)
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

// nodeRoles are the sorted roles named by node-role.kubernetes.io/<role>
// label keys and by a kubernetes.io/role label value.
func nodeRoles(n *corev1.Node) []string {
	var roles []string
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				roles = append(roles, role)
			}
		case k == labelNodeRole && v != "":
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	return slices.Compact(roles)
}

// address is the node's first address of type t, or "<none>".
func address(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
