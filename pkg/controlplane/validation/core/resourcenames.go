package core

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource names of quotas and the basic quantity rule of volumes and
// claims (upstream's pkg/apis/core/helper and pkg/apis/core/validation,
// v1.37); the other resource rules are the pods' (helpers.go,
// resources.go).

// invalidQuotaResource is upstream's message for a resource a quota cannot
// limit.
const invalidQuotaResource = "must be a standard resource for quota"

// standardQuotaResources are the resources without a domain a quota may
// limit (besides hugepages).
var standardQuotaResources = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

// isStandardQuotaResourceName reports whether a quota tracks name.
func isStandardQuotaResourceName(name corev1.ResourceName) bool {
	return slices.Contains(standardQuotaResources, name) || isQuotaHugePageResourceName(name)
}

// basicResourceErrors is upstream's validateBasicResource: the quantity's
// integer value must not be negative.
func basicResourceErrors(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Value() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.Value(), "must be a valid resource quantity")}
	}
	return nil
}

// ValidateResourceQuotaResourceName checks a resource name a quota may
// limit: a qualified name, standard for quota when it has no domain.
func ValidateResourceQuotaResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(name, fldPath)
	if !strings.Contains(string(name), "/") && !isStandardQuotaResourceName(name) {
		return append(allErrs, field.Invalid(fldPath, name, invalidQuotaResource))
	}
	return allErrs
}
