package resourcequota

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders quotas as upstream's printResourceQuota
// (kubernetes pkg/printers/internalversion/printers.go, as of the releases
// that serve MutatingAdmissionPolicy; older ones put AGE second): NAME
// REQUEST LIMIT AGE, where REQUEST and LIMIT list
// "<resource>: <used>/<hard>" for each resource of status.hard, sorted,
// "limits.*" resources under LIMIT.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		q, ok := obj.(*corev1.ResourceQuota)
		if !ok {
			return nil, false
		}
		names := make([]string, 0, len(q.Status.Hard))
		for name := range q.Status.Hard {
			names = append(names, string(name))
		}
		slices.Sort(names)
		var requests, limits []string
		for _, name := range names {
			used, hard := q.Status.Used[corev1.ResourceName(name)], q.Status.Hard[corev1.ResourceName(name)]
			cell := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
			if prefix, _, found := strings.Cut(name, "."); found && prefix == "limits" {
				limits = append(limits, cell)
			} else {
				requests = append(requests, cell)
			}
		}
		return []any{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), table.Since(q.CreationTimestamp)}, true
	},
}
