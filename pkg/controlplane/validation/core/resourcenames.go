package core

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource names and quantities of nodes, volumes, claims, limit ranges
// and quotas (upstream's pkg/apis/core/helper and the resource rules of
// pkg/apis/core/validation, v1.37).

// Upstream's messages.
const (
	quantityNegativeMsg    = "must be greater than or equal to 0"
	quantityNotIntegerMsg  = "must be an integer"
	quantityNotPositiveMsg = "must be greater than zero"
	invalidQuotaResource   = "must be a standard resource for quota"
)

// resName classifies a resource name.
type resName corev1.ResourceName

// native: unprefixed, or in the kubernetes.io/ namespace.
func (n resName) native() bool {
	return !strings.Contains(string(n), "/") || strings.Contains(string(n), corev1.ResourceDefaultNamespacePrefix)
}

func (n resName) hugePages() bool {
	return strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix)
}

func (n resName) quotaHugePages() bool {
	return n.hugePages() || strings.HasPrefix(string(n), corev1.ResourceRequestsHugePagesPrefix)
}

// extended: not native, not "requests."-prefixed, and a qualified name
// once prefixed with "requests." (as quota names it).
func (n resName) extended() bool {
	if n.native() || strings.HasPrefix(string(n), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(n))) == 0
}

var countedResources = []corev1.ResourceName{
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

// integer: counted in whole units (object counts and extended resources).
func (n resName) integer() bool {
	return slices.Contains(countedResources, corev1.ResourceName(n)) || n.extended()
}

// overcommit: requests may be below limits (native, not hugepages).
func (n resName) overcommit() bool {
	return n.native() && !n.hugePages()
}

var standardResources = append([]corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourceStorage, corev1.ResourceRequestsStorage,
}, countedResources...)

func (n resName) standard() bool {
	return slices.Contains(standardResources, corev1.ResourceName(n)) || n.quotaHugePages()
}

func (n resName) standardContainer() bool {
	switch corev1.ResourceName(n) {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	return n.hugePages()
}

var standardQuotaResources = append([]corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
}, countedResources...)

func (n resName) standardQuota() bool {
	return slices.Contains(standardQuotaResources, corev1.ResourceName(n)) || n.quotaHugePages()
}

// resourceQuantityErrors checks a quantity of a resource: not negative,
// and whole for resources counted in integers (upstream's
// ValidateResourceQuantityValue).
func resourceQuantityErrors(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := nonNegativeQuantityErrors(q, fldPath)
	if resName(name).integer() && q.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q, quantityNotIntegerMsg))
	}
	return allErrs
}

func nonNegativeQuantityErrors(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), quantityNegativeMsg)}
	}
	return nil
}

func positiveQuantityErrors(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), quantityNotPositiveMsg)}
	}
	return nil
}

// basicResourceErrors is upstream's validateBasicResource: the quantity's
// integer value must not be negative.
func basicResourceErrors(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Value() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.Value(), "must be a valid resource quantity")}
	}
	return nil
}

// qualifiedResourceNameErrors: a qualified name, and a standard resource
// when it has no domain (upstream's validateResourceName).
func qualifiedResourceNameErrors(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") && !resName(name).standard() {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource type or fully qualified")}
	}
	return nil
}

// containerResourceNameErrors: a resource a container may request
// (upstream's validateContainerResourceName).
func containerResourceNameErrors(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := qualifiedResourceNameErrors(name, fldPath)
	if !strings.Contains(string(name), "/") {
		if !resName(name).standardContainer() {
			return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	} else if !resName(name).native() && !resName(name).extended() {
		return append(allErrs, field.Invalid(fldPath, name, "doesn't follow extended resource name standard"))
	}
	return allErrs
}

// ValidateResourceQuotaResourceName checks a resource name a quota may
// limit: a qualified name, standard for quota when it has no domain.
func ValidateResourceQuotaResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := qualifiedResourceNameErrors(name, fldPath)
	if !strings.Contains(string(name), "/") && !resName(name).standardQuota() {
		return append(allErrs, field.Invalid(fldPath, name, invalidQuotaResource))
	}
	return allErrs
}

// sortedResourceNames are the names of list, sorted (errors come in a
// stable order; upstream's map order is random).
func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
