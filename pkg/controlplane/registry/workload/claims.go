package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ClaimTemplateWarnings are upstream's warnings about a statefulset's
// volume claim templates: a fractional byte count in
// resources.requests.storage or resources.limits.storage. The paths are
// upstream's, quirks included: on create
// spec.volumeClaimTemplates[i].resources..., on update
// spec.volumeClaimTemplates[i].Spec.resources...
func ClaimTemplateWarnings(claims []corev1.PersistentVolumeClaim, update bool) []string {
	var warnings []string
	for i, c := range claims {
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i)
		if update {
			p = p.Child("Spec")
		}
		for _, kind := range []struct {
			name string
			list corev1.ResourceList
		}{{"requests", c.Spec.Resources.Requests}, {"limits", c.Spec.Resources.Limits}} {
			q := kind.list[corev1.ResourceStorage]
			if q.MilliValue()%1000 != 0 {
				warnings = append(warnings, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer",
					p.Child("resources", kind.name).Key(string(corev1.ResourceStorage)), q.String()))
			}
		}
	}
	return warnings
}
