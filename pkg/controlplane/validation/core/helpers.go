package core

import (
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Upstream's messages.
const (
	isNegativeErrorMsg    = apimachineryvalidation.IsNegativeErrorMsg
	isNotIntegerErrorMsg  = "must be an integer"
	isNotPositiveErrorMsg = "must be greater than zero"
	fileModeErrorMsg      = "must be a number between 0 and 0777 (octal), both inclusive"
	moreThanOneVolumeType = "may not specify more than 1 volume type"
)

// Name rules of the objects pods refer to (upstream's Validate<Kind>Name).
var (
	// ValidatePodName checks a pod's name: a DNS subdomain.
	ValidatePodName       = apimachineryvalidation.NameIsDNSSubdomain
	validateNodeName      = apimachineryvalidation.NameIsDNSSubdomain
	validateSecretName    = apimachineryvalidation.NameIsDNSSubdomain
	validateConfigMapName = apimachineryvalidation.NameIsDNSSubdomain
	validateClassName     = apimachineryvalidation.NameIsDNSSubdomain
)

// ValidateDNS1123Label is one Invalid error per reason value is not a DNS
// label.
func ValidateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// ValidateDNS1123Subdomain is one Invalid error per reason value is not a
// DNS subdomain.
func ValidateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// ValidateQualifiedName is one Invalid error per reason value is not a
// qualified name (a label key).
func ValidateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// nameErrors turns a name rule's messages into Invalid errors.
func nameErrors(fn apimachineryvalidation.ValidateNameFunc, name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range fn(name, false) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

// ValidateNonnegativeQuantity is Invalid for a negative quantity.
func ValidateNonnegativeQuantity(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) < 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNegativeErrorMsg)}
	}
	return nil
}

// ValidatePositiveQuantityValue is Invalid for a quantity not above zero.
func ValidatePositiveQuantityValue(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNotPositiveErrorMsg)}
	}
	return nil
}

// ValidateResourceQuantityValue checks a quantity of resource: not
// negative, and whole for resources counted in integers.
func ValidateResourceQuantityValue(name corev1.ResourceName, value resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := ValidateNonnegativeQuantity(value, fldPath)
	if isIntegerResourceName(name) && value.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, value, isNotIntegerErrorMsg))
	}
	return allErrs
}

// validateFileMode is Invalid for a file mode outside 0..0777.
func validateFileMode(mode *int32, fldPath *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0o777 || *mode < 0) {
		return field.ErrorList{field.Invalid(fldPath, *mode, fileModeErrorMsg)}
	}
	return nil
}

// validatePathNoBacksteps is Invalid when a path has a ".." element.
func validatePathNoBacksteps(targetPath string, fldPath *field.Path) field.ErrorList {
	for _, item := range strings.Split(filepath.ToSlash(targetPath), "/") {
		if item == ".." {
			return field.ErrorList{field.Invalid(fldPath, targetPath, "must not contain '..'")}
		}
	}
	return nil
}

// validateLocalDescendingPath: relative and without "..".
func validateLocalDescendingPath(targetPath string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(targetPath) {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must be a relative path"))
	}
	return append(allErrs, validatePathNoBacksteps(targetPath, fldPath)...)
}

// ValidateLocalNonReservedPath: relative, without "..", not starting with
// "..".
func ValidateLocalNonReservedPath(targetPath string, fldPath *field.Path) field.ErrorList {
	allErrs := validateLocalDescendingPath(targetPath, fldPath)
	if strings.HasPrefix(targetPath, "..") && !strings.HasPrefix(targetPath, "../") {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must not start with '..'"))
	}
	return allErrs
}

// validateFieldAllowList is Forbidden (errorText) for each field of the
// struct value that is set and not allowed; the path names the field in
// lower camel case.
func validateFieldAllowList(value any, allowed map[string]bool, errorText string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	t, v := reflect.TypeOf(value), reflect.ValueOf(value)
	for i := range t.NumField() {
		f := t.Field(i)
		if allowed[f.Name] || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		allErrs = append(allErrs, field.Forbidden(fldPath.Child(string(unicode.ToLower(r))+f.Name[n:]), errorText))
	}
	return allErrs
}

// Resource names (upstream's pkg/apis/core/helper).

var standardContainerResources = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true,
}

var standardResources = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true,
	corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true, corev1.ResourceRequestsEphemeralStorage: true,
	corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true, corev1.ResourceLimitsEphemeralStorage: true,
	corev1.ResourcePods: true, corev1.ResourceQuotas: true, corev1.ResourceServices: true,
	corev1.ResourceReplicationControllers: true, corev1.ResourceSecrets: true, corev1.ResourceConfigMaps: true,
	corev1.ResourcePersistentVolumeClaims: true, corev1.ResourceStorage: true, corev1.ResourceRequestsStorage: true,
	corev1.ResourceServicesNodePorts: true, corev1.ResourceServicesLoadBalancers: true,
}

var integerResources = map[corev1.ResourceName]bool{
	corev1.ResourcePods: true, corev1.ResourceQuotas: true, corev1.ResourceServices: true,
	corev1.ResourceReplicationControllers: true, corev1.ResourceSecrets: true, corev1.ResourceConfigMaps: true,
	corev1.ResourcePersistentVolumeClaims: true, corev1.ResourceServicesNodePorts: true, corev1.ResourceServicesLoadBalancers: true,
}

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

func isStandardResourceName(name corev1.ResourceName) bool {
	return standardResources[name] || isQuotaHugePageResourceName(name)
}

func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func isIntegerResourceName(name corev1.ResourceName) bool {
	return integerResources[name] || isExtendedResourceName(name)
}

func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePageResourceName(name)
}

// isHugePageValueDivisible reports whether quantity is a whole number of
// the page size the hugepages-<size> resource name names.
func isHugePageValueDivisible(name corev1.ResourceName, quantity resource.Quantity) bool {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.MilliValue()%1000 != 0 {
		return false
	}
	return quantity.Value()%size.Value() == 0
}

// deletionCostValid reports whether the pod-deletion-cost annotation, if
// set, is a 32-bit integer written without a sign or leading zeros.
func deletionCostValid(annotations map[string]string) bool {
	v, ok := annotations[corev1.PodDeletionCost]
	if !ok {
		return true
	}
	if v == "" || !(v[0] == '-' || v == "0" || v[0] >= '1' && v[0] <= '9') {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 32)
	return err == nil
}

// visitContainers calls fn with every container of spec and its path
// (init, regular, then ephemeral containers), until fn returns false.
func visitContainers(spec *corev1.PodSpec, specPath *field.Path, fn func(c *corev1.Container, p *field.Path) bool) {
	for i := range spec.InitContainers {
		if !fn(&spec.InitContainers[i], specPath.Child("initContainers").Index(i)) {
			return
		}
	}
	for i := range spec.Containers {
		if !fn(&spec.Containers[i], specPath.Child("containers").Index(i)) {
			return
		}
	}
	for i := range spec.EphemeralContainers {
		if !fn((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), specPath.Child("ephemeralContainers").Index(i)) {
			return
		}
	}
}

func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
