package core

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metavalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// Validation of core/v1 limit ranges and resource quotas, as upstream's
// ValidateLimitRange, ValidateResourceQuota, ValidateResourceQuotaUpdate
// and ValidateResourceQuotaStatusUpdate (kubernetes
// pkg/apis/core/validation, v1.37). Map entries are checked in sorted
// order, so that errors come in a stable order.

// ValidateLimitRangeName checks a limit range's name: a DNS subdomain.
var ValidateLimitRangeName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateResourceQuotaName checks a quota's name: a DNS subdomain.
var ValidateResourceQuotaName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateLimitRange checks a limit range: metadata and
// [ValidateLimitRangeFields].
func ValidateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMeta(&lr.ObjectMeta, true, ValidateLimitRangeName, field.NewPath("metadata"))
	return append(allErrs, validateLimitRangeSpec(lr)...)
}

// ValidateLimitRangeFields checks a limit range but for the generic
// metadata rules: each limit's type (Pod, Container, PersistentVolumeClaim
// or qualified) once, resource names fit for the type, no default for
// Pod limits, a storage min or max for claim limits, and, per resource,
// min <= defaultRequest <= default <= max and 1 <= maxLimitRequestRatio
// <= max/min (equal default and defaultRequest for resources that cannot
// be overcommitted).
func ValidateLimitRangeFields(lr *corev1.LimitRange) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(lr.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateLimitRangeSpec(lr)...)
}

var standardLimitTypes = []corev1.LimitType{corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim}

func validateLimitRangeSpec(lr *corev1.LimitRange) field.ErrorList {
	var allErrs field.ErrorList
	types := map[corev1.LimitType]bool{}
	limitsPath := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		idx := limitsPath.Index(i)
		limit := &lr.Spec.Limits[i]
		allErrs = append(allErrs, limitTypeErrors(limit.Type, idx.Child("type"))...)
		if types[limit.Type] {
			allErrs = append(allErrs, field.Duplicate(idx.Child("type"), limit.Type))
		}
		types[limit.Type] = true

		names := map[corev1.ResourceName]bool{}
		collect := func(list corev1.ResourceList, child string) {
			for _, name := range sortedNames(list) {
				allErrs = append(allErrs, limitResourceNameErrors(limit.Type, name, idx.Child(child).Key(string(name)))...)
				names[name] = true
			}
		}
		collect(limit.Max, "max")
		collect(limit.Min, "min")
		if limit.Type == corev1.LimitTypePod {
			if len(limit.Default) > 0 {
				allErrs = append(allErrs, field.Forbidden(idx.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(limit.DefaultRequest) > 0 {
				allErrs = append(allErrs, field.Forbidden(idx.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			collect(limit.Default, "default")
			collect(limit.DefaultRequest, "defaultRequest")
		}
		if limit.Type == corev1.LimitTypePersistentVolumeClaim {
			_, hasMin := limit.Min[corev1.ResourceStorage]
			_, hasMax := limit.Max[corev1.ResourceStorage]
			if !hasMin && !hasMax {
				allErrs = append(allErrs, field.Required(idx.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		collect(limit.MaxLimitRequestRatio, "maxLimitRequestRatio")

		defaults, defaultRequests := limit.Default, limit.DefaultRequest
		if limit.Type == corev1.LimitTypePod {
			// Rejected above, and ignored by upstream's comparisons.
			defaults, defaultRequests = nil, nil
		}
		sorted := make([]corev1.ResourceName, 0, len(names))
		for name := range names {
			sorted = append(sorted, name)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			allErrs = append(allErrs, limitRangeQuantityErrors(k, limit.Min, limit.Max, defaults, defaultRequests, limit.MaxLimitRequestRatio, idx)...)
		}
	}
	return allErrs
}

// limitTypeErrors: a qualified name, a standard type when it has no
// domain.
func limitTypeErrors(t corev1.LimitType, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		allErrs = append(allErrs, field.Invalid(fldPath, t, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(t), "/") && !slices.Contains(standardLimitTypes, t) {
		return field.ErrorList{field.Invalid(fldPath, t, "must be a standard limit type or fully qualified")}
	}
	return nil
}

// limitResourceNameErrors: Pod and Container limits name container
// resources, the others (claims: storage) any resource.
func limitResourceNameErrors(t corev1.LimitType, name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	switch t {
	case corev1.LimitTypePod, corev1.LimitTypeContainer:
		return validateContainerResourceName(name, fldPath)
	default:
		return validateResourceName(name, fldPath)
	}
}

// limitRangeQuantityErrors compares the quantities of resource k in one
// limit.
func limitRangeQuantityErrors(k corev1.ResourceName, minList, maxList, defaults, defaultRequests, ratios corev1.ResourceList, idx *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	minQ, hasMin := minList[k]
	maxQ, hasMax := maxList[k]
	def, hasDefault := defaults[k]
	defReq, hasDefReq := defaultRequests[k]
	ratio, hasRatio := ratios[k]
	key := string(k)
	if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("min").Key(key), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
	}
	if hasDefReq && hasMin && minQ.Cmp(defReq) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), defReq.String())))
	}
	if hasDefReq && hasMax && defReq.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("default request value %s is greater than max value %s", defReq.String(), maxQ.String())))
	}
	if hasDefReq && hasDefault && defReq.Cmp(def) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("default request value %s is greater than default limit value %s", defReq.String(), def.String())))
	}
	if hasDefault && hasMin && minQ.Cmp(def) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("default").Key(key), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), def.String())))
	}
	if hasDefault && hasMax && def.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("default").Key(key), maxQ, fmt.Sprintf("default value %s is greater than max value %s", def.String(), maxQ.String())))
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax {
		ratioValue := float64(ratio.Value())
		minValue, maxValue := minQ.Value(), maxQ.Value()
		if ratio.Value() < resource.MaxMilliValue && minValue < resource.MaxMilliValue && maxValue < resource.MaxMilliValue {
			ratioValue = float64(ratio.MilliValue()) / 1000
			minValue, maxValue = minQ.MilliValue(), maxQ.MilliValue()
		}
		ratioLimit := float64(maxValue) / float64(minValue)
		if ratioValue > ratioLimit {
			allErrs = append(allErrs, field.Invalid(idx.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), ratioLimit)))
		}
	}
	if !isOvercommitAllowed(k) && hasDefault && hasDefReq && def.Cmp(defReq) != 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), defReq.String(), key)))
	}
	return allErrs
}

// ValidateResourceQuota checks a new quota: metadata and
// [ValidateResourceQuotaFields].
func ValidateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMeta(&q.ObjectMeta, true, ValidateResourceQuotaName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

// ValidateResourceQuotaFields checks a quota but for the generic metadata
// rules: the resource names and quantities of spec.hard, status.hard and
// status.used, the scopes (known, fit for every resource of spec.hard,
// not conflicting) and the scope selector's expressions.
func ValidateResourceQuotaFields(q *corev1.ResourceQuota) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(q.Finalizers, field.NewPath("metadata", "finalizers"))
	allErrs = append(allErrs, validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

// ValidateResourceQuotaUpdateFields checks an update of a quota but for
// the generic metadata rules: the new quota as [ValidateResourceQuotaFields]
// (upstream checks the spec twice, reporting its errors twice; kapi once),
// and scopes that do not change.
func ValidateResourceQuotaUpdateFields(q, old *corev1.ResourceQuota) field.ErrorList {
	allErrs := ValidateResourceQuotaFields(q)
	newScopes, oldScopes := map[corev1.ResourceQuotaScope]bool{}, map[corev1.ResourceQuotaScope]bool{}
	for _, s := range q.Spec.Scopes {
		newScopes[s] = true
	}
	for _, s := range old.Spec.Scopes {
		oldScopes[s] = true
	}
	if !sameScopes(newScopes, oldScopes) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

func sameScopes(a, b map[corev1.ResourceQuotaScope]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for s := range a {
		if !b[s] {
			return false
		}
	}
	return true
}

// ValidateResourceQuotaStatusUpdateFields checks a status update of a
// quota but for the generic metadata rules: a resourceVersion, and the
// resource names and quantities of status.hard and status.used.
func ValidateResourceQuotaStatusUpdateFields(q, _ *corev1.ResourceQuota) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(q.Finalizers, field.NewPath("metadata", "finalizers"))
	if q.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	return append(allErrs, validateResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

func validateResourceQuotaStatus(status *corev1.ResourceQuotaStatus, fldPath *field.Path) field.ErrorList {
	allErrs := quotaResourcesErrors(status.Hard, fldPath.Child("hard"))
	return append(allErrs, quotaResourcesErrors(status.Used, fldPath.Child("used"))...)
}

func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	allErrs := quotaResourcesErrors(spec.Hard, fldPath.Child("hard"))
	allErrs = append(allErrs, validateResourceQuotaScopes(spec, fldPath)...)
	if spec.ScopeSelector != nil {
		allErrs = append(allErrs, validateScopeSelector(spec, fldPath.Child("scopeSelector"))...)
	}
	return allErrs
}

func quotaResourcesErrors(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedNames(list) {
		p := fldPath.Key(string(name))
		allErrs = append(allErrs, ValidateResourceQuotaResourceName(name, p)...)
		allErrs = append(allErrs, ValidateResourceQuantityValue(name, list[name], p)...)
	}
	return allErrs
}

// quotaScopes are the scopes a quota may use (VolumeAttributesClass is GA,
// and so on, since v1.34).
var quotaScopes = []corev1.ResourceQuotaScope{
	corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
	corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
	corev1.ResourceQuotaScopeVolumeAttributesClass,
}

// scopeFitsResource reports whether a quota scope may limit resource
// (upstream's IsResourceQuotaScopeValidForResource).
func scopeFitsResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	podCount := name == corev1.ResourcePods
	podCompute := slices.Contains([]corev1.ResourceName{
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	}, name)
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCount || podCompute
	case corev1.ResourceQuotaScopeBestEffort:
		return podCount
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return name == corev1.ResourcePersistentVolumeClaims || name == corev1.ResourceRequestsStorage
	default:
		return true
	}
}

// conflictingScopes are the pairs a quota may not use together.
var conflictingScopes = [][2]corev1.ResourceQuotaScope{
	{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
	{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
}

func validateResourceQuotaScopes(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	scopesPath := fldPath.Child("scopes")
	hard := sortedNames(spec.Hard)
	used := map[corev1.ResourceQuotaScope]bool{}
	for _, scope := range spec.Scopes {
		if !slices.Contains(quotaScopes, scope) {
			allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope"))
		}
		for _, k := range hard {
			if isStandardQuotaResourceName(k) && !scopeFitsResource(scope, k) {
				allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
		used[scope] = true
	}
	for _, pair := range conflictingScopes {
		if used[pair[0]] && used[pair[1]] {
			allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "conflicting scopes"))
		}
	}
	return allErrs
}

// validateScopeSelector checks the expressions of a quota's scope
// selector: known scopes fit for the resources, the Exists operator for
// scopes without values, values exactly for In and NotIn.
func validateScopeSelector(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	exprPath := fldPath.Child("matchExpressions")
	hard := sortedNames(spec.Hard)
	used := map[corev1.ResourceQuotaScope]bool{}
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !slices.Contains(quotaScopes, req.ScopeName) {
			allErrs = append(allErrs, field.Invalid(exprPath.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, k := range hard {
			if isStandardQuotaResourceName(k) && !scopeFitsResource(req.ScopeName, k) {
				allErrs = append(allErrs, field.Invalid(exprPath, spec.ScopeSelector, "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				allErrs = append(allErrs, field.Invalid(exprPath.Child("operator"), req.Operator,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				allErrs = append(allErrs, field.Required(exprPath.Child("values"),
					"must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				allErrs = append(allErrs, field.Invalid(exprPath.Child("values"), req.Values,
					"must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			allErrs = append(allErrs, field.Invalid(exprPath.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		used[req.ScopeName] = true
	}
	for _, pair := range conflictingScopes {
		if used[pair[0]] && used[pair[1]] {
			allErrs = append(allErrs, field.Invalid(exprPath, spec.Scopes, "conflicting scopes"))
		}
	}
	return allErrs
}
