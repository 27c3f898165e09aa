package core

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResourceName: a qualified name; a name without a domain must
// be a standard resource.
func validateResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") && !isStandardResourceName(name) {
		return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

// validateContainerResourceName: cpu, memory, ephemeral-storage,
// hugepages-*, or an extended resource.
func validateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(name, fldPath)
	if !strings.Contains(string(name), "/") {
		if !standardContainerResources[name] && !isHugePageResourceName(name) {
			return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResourceName(name) {
		return append(allErrs, field.Invalid(fldPath, name, "doesn't follow extended resource name standard"))
	}
	return allErrs
}

// supportedPodLevelResources are what spec.resources may hold.
var supportedPodLevelResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceHugePagesPrefix, corev1.ResourceMemory}

func validatePodResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	if allErrs := validateResourceName(name, fldPath); len(allErrs) != 0 {
		return allErrs
	}
	if name != corev1.ResourceCPU && name != corev1.ResourceMemory && !isHugePageResourceName(name) {
		return field.ErrorList{field.NotSupported(fldPath, name, supportedPodLevelResources)}
	}
	return nil
}

// ValidateContainerResourceRequirements checks a container's resources:
// names, quantities, requests not above limits (equal for resources that
// cannot be overcommitted), hugepages rules and claim references.
func ValidateContainerResourceRequirements(r *corev1.ResourceRequirements, claims map[string]bool, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	return validateResourceRequirements(r, validateContainerResourceName, claims, fldPath, opts)
}

func validateResourceRequirements(r *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList,
	claims map[string]bool, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	var limCPUOrMemory, reqCPUOrMemory, limHugePages, reqHugePages bool
	for _, name := range sortedNames(r.Limits) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		allErrs = append(allErrs, nameFn(name, p)...)
		allErrs = append(allErrs, ValidateResourceQuantityValue(name, q, p)...)
		if isHugePageResourceName(name) {
			limHugePages = true
			allErrs = append(allErrs, validateHugePageValue(name, q, p, opts)...)
		}
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
			limCPUOrMemory = true
		}
	}
	for _, name := range sortedNames(r.Requests) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		allErrs = append(allErrs, nameFn(name, p)...)
		allErrs = append(allErrs, ValidateResourceQuantityValue(name, q, p)...)
		if limit, ok := r.Limits[name]; ok {
			if q.Cmp(limit) != 0 && !isOvercommitAllowed(name) {
				allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if q.Cmp(limit) > 0 {
				allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !isOvercommitAllowed(name) {
			allErrs = append(allErrs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePageResourceName(name) {
			reqHugePages = true
			allErrs = append(allErrs, validateHugePageValue(name, q, p, opts)...)
		}
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
			reqCPUOrMemory = true
		}
	}
	if !limCPUOrMemory && !reqCPUOrMemory && (reqHugePages || limHugePages) {
		allErrs = append(allErrs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	return append(allErrs, validateResourceClaimNames(r.Claims, claims, fldPath.Child("claims"))...)
}

func validateHugePageValue(name corev1.ResourceName, q resource.Quantity, p *field.Path, opts PodValidationOptions) field.ErrorList {
	if !opts.AllowIndivisibleHugePagesValues && !isHugePageValueDivisible(name, q) {
		return field.ErrorList{field.Invalid(p, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name))}
	}
	return nil
}

// validateResourceClaimNames checks a container's claim references: each
// names an entry of spec.resourceClaims, at most once.
func validateResourceClaimNames(refs []corev1.ResourceClaim, claims map[string]bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, ref := range refs {
		p := fldPath.Index(i)
		if ref.Name == "" {
			allErrs = append(allErrs, field.Required(p, ""))
			continue
		}
		if names[ref.Name] {
			allErrs = append(allErrs, field.Duplicate(p, ref.Name))
		} else {
			key := ref.Name
			if ref.Request != "" {
				allErrs = append(allErrs, ValidateDNS1123Label(ref.Request, p.Child("request"))...)
				key += "/" + ref.Request
			}
			if names[key] {
				allErrs = append(allErrs, field.Duplicate(p, key))
			} else if ref.Request == "" {
				for k := range names {
					if before, _, ok := strings.Cut(k, "/"); ok && before == ref.Name {
						allErrs = append(allErrs, field.Duplicate(p, ref.Name))
					}
				}
			}
			names[key] = true
		}
		if !claims[ref.Name] {
			e := field.NotFound(p, ref.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			if len(claims) == 0 {
				e.Detail += " which is empty"
			} else {
				list := make([]string, 0, len(claims))
				for n := range claims {
					list = append(list, n)
				}
				sort.Strings(list)
				e.Detail += ": " + strings.Join(list, ", ")
			}
			allErrs = append(allErrs, e)
		}
	}
	return allErrs
}

// validatePodResources checks spec.resources (pod-level resources): no
// claims, valid names and quantities, requests not below the
// containers' aggregated requests, container limits not above the pod's.
func validatePodResources(spec *corev1.PodSpec, claims map[string]bool, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	if spec.Resources == nil {
		return nil
	}
	var allErrs field.ErrorList
	if spec.Resources.Claims != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("claims"), "claims cannot be set for Resources at pod-level"))
	}
	allErrs = append(allErrs, validateResourceRequirements(spec.Resources, validatePodResourceName, claims, fldPath, opts)...)
	aggregated := aggregateContainerRequests(spec)
	for _, name := range sortedNames(aggregated) {
		ctr := aggregated[name]
		pod := spec.Resources.Requests[name]
		if ctr.Cmp(pod) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("requests").Key(string(name)), pod.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", ctr.String())))
		}
	}
	for i, c := range spec.Containers {
		for _, name := range sortedNames(c.Resources.Limits) {
			limit := c.Resources.Limits[name]
			podLimit, ok := spec.Resources.Limits[name]
			if ok && limit.Cmp(podLimit) > 0 {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("containers").Index(i).Key(string(name)).Child("limits"), limit.String(),
					fmt.Sprintf("must be less than or equal to pod limits of %s", podLimit.String())))
			}
		}
	}
	return allErrs
}

// aggregateContainerRequests is what the containers need of each resource
// (containers and sidecars summed, init containers' peaks).
func aggregateContainerRequests(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(list, more corev1.ResourceList) {
		for n, q := range more {
			v := list[n]
			v.Add(q)
			list[n] = v
		}
	}
	for _, c := range spec.Containers {
		add(out, c.Resources.Requests)
	}
	sidecars, peak := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		use := corev1.ResourceList{}
		if isRestartableInitContainer(c) {
			add(out, c.Resources.Requests)
			add(sidecars, c.Resources.Requests)
			add(use, sidecars)
		} else {
			add(use, c.Resources.Requests)
			add(use, sidecars)
		}
		for n, q := range use {
			if v, ok := peak[n]; !ok || q.Cmp(v) > 0 {
				peak[n] = q.DeepCopy()
			}
		}
	}
	for n, q := range peak {
		if v, ok := out[n]; !ok || q.Cmp(v) > 0 {
			out[n] = q.DeepCopy()
		}
	}
	return out
}

// sortedNames returns a resource list's names in order, so that errors
// come out in a stable order (upstream iterates the map).
func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// validateOverhead checks spec.overhead as container limits.
func validateOverhead(overhead corev1.ResourceList, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	return ValidateContainerResourceRequirements(&corev1.ResourceRequirements{Limits: overhead}, nil, fldPath, opts)
}
