package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
)

// NameWarnings is upstream's warning for a deployment or replicaset name
// that is not a DNS label.
func NameWarnings(name string) []string {
	if msgs := utilvalidation.IsDNS1123Label(name); len(msgs) != 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}

// TemplateValidationOptions are the pod validation options of a
// workload's template (old is nil on create): core's, which relax the
// rules an update would otherwise fail on because the stored template
// already breaks them (upstream's GetValidationOptionsFromPodTemplate).
func TemplateValidationOptions(t, old *corev1.PodTemplateSpec) appsvalidation.PodValidationOptions {
	return core.ValidationOptionsForPodTemplate(t, old)
}

// templatePath is where workloads keep their pod template.
var templatePath = field.NewPath("spec", "template")

// TemplateWarnings are the warnings about a workload's pod template
// (upstream's GetWarningsForPodTemplate, the subset core's PodSpecWarnings
// gives).
func TemplateWarnings(t *corev1.PodTemplateSpec) []string {
	return core.PodSpecWarnings(&t.ObjectMeta, &t.Spec, templatePath)
}
