package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func labelValueErrors(v string) []string { return validation.IsValidLabelValue(v) }

// ValidateNodeSelectorRequirement checks one expression of a node selector
// term.
func ValidateNodeSelectorRequirement(rq corev1.NodeSelectorRequirement, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(rq.Values) > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(rq.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelName(rq.Key, fldPath.Child("key"))...)
	if !allowInvalidLabelValue {
		for i, v := range rq.Values {
			for _, msg := range labelValueErrors(v) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values").Index(i), v, msg))
			}
		}
	}
	return allErrs
}

// ValidateNodeFieldSelectorRequirement checks a matchFields expression:
// In or NotIn one node name (metadata.name).
func ValidateNodeFieldSelectorRequirement(req corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	if req.Key != metav1.ObjectNameField {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), req.Key, "not a valid field selector key"))
	} else {
		for i, v := range req.Values {
			allErrs = append(allErrs, nameErrors(validateNodeName, v, fldPath.Child("values").Index(i))...)
		}
	}
	return allErrs
}

// ValidateNodeSelectorTerm checks a node selector term.
func ValidateNodeSelectorTerm(term corev1.NodeSelectorTerm, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for j, req := range term.MatchExpressions {
		allErrs = append(allErrs, ValidateNodeSelectorRequirement(req, allowInvalidLabelValue, fldPath.Child("matchExpressions").Index(j))...)
	}
	for j, req := range term.MatchFields {
		allErrs = append(allErrs, ValidateNodeFieldSelectorRequirement(req, fldPath.Child("matchFields").Index(j))...)
	}
	return allErrs
}

// ValidateNodeSelector checks a node selector: at least one term.
func ValidateNodeSelector(ns *corev1.NodeSelector, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	termPath := fldPath.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termPath, "must have at least one node selector term")}
	}
	var allErrs field.ErrorList
	for i, term := range ns.NodeSelectorTerms {
		allErrs = append(allErrs, ValidateNodeSelectorTerm(term, allowInvalidLabelValue, termPath.Index(i))...)
	}
	return allErrs
}

// ValidatePreferredSchedulingTerms checks preferred node affinity terms:
// weight 1-100, invalid label values tolerated.
func ValidatePreferredSchedulingTerms(terms []corev1.PreferredSchedulingTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, term := range terms {
		if term.Weight <= 0 || term.Weight > 100 {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("weight"), term.Weight, "must be in the range 1-100"))
		}
		allErrs = append(allErrs, ValidateNodeSelectorTerm(term.Preference, true, fldPath.Index(i).Child("preference"))...)
	}
	return allErrs
}

func validateAffinity(a *corev1.Affinity, opts PodValidationOptions, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var allErrs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := fldPath.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			allErrs = append(allErrs, ValidateNodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, opts.AllowInvalidLabelValueInRequiredNodeAffinity,
				p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		if len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			allErrs = append(allErrs, ValidatePreferredSchedulingTerms(na.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution,
			opts.AllowInvalidLabelValueInSelector, fldPath.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution,
			opts.AllowInvalidLabelValueInSelector, fldPath.Child("podAntiAffinity"))...)
	}
	return allErrs
}

func validatePodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, allowInvalid bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range required {
		allErrs = append(allErrs, validatePodAffinityTerm(t, allowInvalid, fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for j, wt := range preferred {
		p := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(j)
		if wt.Weight <= 0 || wt.Weight > 100 {
			allErrs = append(allErrs, field.Invalid(p.Child("weight"), wt.Weight, "must be in the range 1-100"))
		}
		allErrs = append(allErrs, validatePodAffinityTerm(wt.PodAffinityTerm, allowInvalid, p.Child("podAffinityTerm"))...)
	}
	return allErrs
}

func validatePodAffinityTerm(t corev1.PodAffinityTerm, allowInvalid bool, fldPath *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalid}
	allErrs := metav1validation.ValidateLabelSelector(t.LabelSelector, opts, fldPath.Child("labelSelector"))
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	for _, name := range t.Namespaces {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), name, msg))
		}
	}
	allErrs = append(allErrs, validateMatchLabelKeysAndMismatchLabelKeys(fldPath, t.MatchLabelKeys, t.MismatchLabelKeys, t.LabelSelector)...)
	if t.TopologyKey == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	}
	return append(allErrs, metav1validation.ValidateLabelName(t.TopologyKey, fldPath.Child("topologyKey"))...)
}

func validateMatchLabelKeysAndMismatchLabelKeys(fldPath *field.Path, match, mismatch []string, sel *metav1.LabelSelector) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateLabelKeys(fldPath.Child("matchLabelKeys"), match, sel)...)
	allErrs = append(allErrs, validateLabelKeys(fldPath.Child("mismatchLabelKeys"), mismatch, sel)...)
	if sel != nil {
		index := map[string]int{}
		for i, k := range match {
			index[k] = i
		}
		keys := map[string]bool{}
		for k := range sel.MatchLabels {
			keys[k] = true
		}
		for _, e := range sel.MatchExpressions {
			// The selector already holds the expressions merged from
			// matchLabelKeys on create: a key also in matchLabels is a
			// duplicate.
			if i, ok := index[e.Key]; ok && keys[e.Key] {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i), e.Key, "exists in both matchLabelKeys and labelSelector"))
			}
			keys[e.Key] = true
		}
	}
	mismatchSet := map[string]bool{}
	for _, k := range mismatch {
		mismatchSet[k] = true
	}
	for i, k := range match {
		if mismatchSet[k] {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return allErrs
}

func validateLabelKeys(fldPath *field.Path, keys []string, sel *metav1.LabelSelector) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if sel == nil {
		return field.ErrorList{field.Forbidden(fldPath, "must not be specified when labelSelector is not set")}
	}
	var allErrs field.ErrorList
	for i, k := range keys {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(k, fldPath.Index(i))...)
	}
	return allErrs
}

// ValidateTolerations checks tolerations: key, operator and value,
// effect, tolerationSeconds only for NoExecute.
func ValidateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if t.Key != "" {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if errs := labelValueErrors(t.Value); len(errs) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, strings.Join(errs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" {
			valid := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
			if !contains(valid, t.Effect) {
				allErrs = append(allErrs, field.NotSupported(p.Child("effect"), t.Effect, valid))
			}
		}
	}
	return allErrs
}

// validateTopologySpreadConstraints checks topology spread constraints.
func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	actions := []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
	policies := []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}
	for i, c := range constraints {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			allErrs = append(allErrs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if !contains(actions, c.WhenUnsatisfiable) {
			allErrs = append(allErrs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, actions))
		}
		for _, rest := range constraints[i+1:] {
			if c.TopologyKey == rest.TopologyKey && c.WhenUnsatisfiable == rest.WhenUnsatisfiable {
				allErrs = append(allErrs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains,
					fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		if c.NodeAffinityPolicy != nil && !contains(policies, *c.NodeAffinityPolicy) {
			allErrs = append(allErrs, field.NotSupported(p.Child("nodeAffinityPolicy"), c.NodeAffinityPolicy, policies))
		}
		if c.NodeTaintsPolicy != nil && !contains(policies, *c.NodeTaintsPolicy) {
			allErrs = append(allErrs, field.NotSupported(p.Child("nodeTaintsPolicy"), c.NodeTaintsPolicy, policies))
		}
		allErrs = append(allErrs, validateMatchLabelKeysInTopologySpread(p.Child("matchLabelKeys"), c.MatchLabelKeys, c.LabelSelector)...)
		if !opts.AllowInvalidTopologySpreadConstraintLabelSelector {
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		}
	}
	return allErrs
}

// validateMatchLabelKeysInTopologySpread checks matchLabelKeys: label
// names, a label selector to merge into, and no key also selected by the
// selector. On create the pod strategy has already merged "key in
// (value)" for each key into matchExpressions
// (MatchLabelKeysInPodTopologySpreadSelectorMerge, on by default), so, as
// for pod affinity terms, a key is a duplicate when it is in matchLabels
// or in more than one expression.
func validateMatchLabelKeysInTopologySpread(fldPath *field.Path, keys []string, sel *metav1.LabelSelector) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if sel == nil {
		allErrs := field.ErrorList{field.Forbidden(fldPath, "must not be specified when labelSelector is not set")}
		for i, k := range keys {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(k, fldPath.Index(i))...)
		}
		return allErrs
	}
	var allErrs field.ErrorList
	seen := map[string]int{}
	for k := range sel.MatchLabels {
		seen[k]++
	}
	for _, e := range sel.MatchExpressions {
		seen[e.Key]++
	}
	for i, k := range keys {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(k, fldPath.Index(i))...)
		if seen[k] > 1 || sel.MatchLabels != nil && seen[k] == 1 && hasKey(sel.MatchLabels, k) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), k, "exists in both matchLabelKeys and labelSelector"))
		}
	}
	return allErrs
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
