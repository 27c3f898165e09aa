package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
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
// workload's template (old is nil on create).
func TemplateValidationOptions(t, old *corev1.PodTemplateSpec) appsvalidation.PodValidationOptions {
	_, _ = t, old
	return appsvalidation.PodValidationOptions{}
}
