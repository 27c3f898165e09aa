package batch

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// Limits of upstream's Job validation.
const (
	// maxParallelismForIndexedJob caps an Indexed Job's parallelism (it
	// bounds the length of status.completedIndexes).
	maxParallelismForIndexedJob = 100_000
	// maxFailedIndexesForIndexedJob caps maxFailedIndexes.
	maxFailedIndexesForIndexedJob = 100_000
	// Above completionsSoftLimit completions, a Job with a per-index
	// backoff limit needs maxFailedIndexes and lower limits.
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000

	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20
	maxManagedByLength                         = 63
	maxJobSuccessPolicySucceededIndexesLimit   = 64 * 1024
	maxSuccessPolicyRule                       = 20
)

var (
	supportedPodFailurePolicyActions = sets.New(
		batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob,
		batchv1.PodFailurePolicyActionIgnore)
	supportedOnExitCodesOperators = sets.New(
		batchv1.PodFailurePolicyOnExitCodesOpIn,
		batchv1.PodFailurePolicyOnExitCodesOpNotIn)
	supportedOnPodConditionsStatuses = sets.New(
		corev1.ConditionFalse,
		corev1.ConditionTrue,
		corev1.ConditionUnknown)
	supportedPodReplacementPolicies = sets.New(
		batchv1.Failed,
		batchv1.TerminatingOrFailed)
)

// The unprefixed labels the Job controller has always set on a Job's
// pods, besides batchv1.ControllerUidLabel and batchv1.JobNameLabel.
const (
	LegacyControllerUIDLabel = "controller-uid"
	LegacyJobNameLabel       = "job-name"
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
)

// ValidateJob checks a new Job, its metadata included.
func ValidateJob(job *batchv1.Job, opts Options) field.ErrorList {
	allErrs := validation.ValidateObjectMeta(&job.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validateJob(job, nil, opts)...)
}

// ValidateJobFields checks a new Job but for the generic metadata rules.
func ValidateJobFields(job *batchv1.Job, opts Options) field.ErrorList {
	allErrs := validation.ValidateKubeFinalizerNames(job.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateJob(job, nil, opts)...)
}

// validateJob checks a Job (updating old, nil on create) but for its
// metadata.
func validateJob(job, old *batchv1.Job, opts Options) field.ErrorList {
	var oldSpec *batchv1.JobSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	var allErrs field.ErrorList
	if old == nil {
		// Only ValidateJobCreate checks the generated selector (v1.37.2).
		allErrs = validateGeneratedSelector(job, opts.RequirePrefixedLabels)
	}
	allErrs = append(allErrs, validateJobSpecWithSelector(&job.Spec, oldSpec, specPath, opts)...)
	spec := &job.Spec
	if ptr.Deref(spec.CompletionMode, "") == batchv1.IndexedCompletion && spec.Completions != nil && *spec.Completions > 0 {
		// The Job controller names an Indexed Job's pods (and sets their
		// hostnames) <job>-<index>: the highest must be a DNS label.
		hostname := fmt.Sprintf("%s-%d", job.Name, *spec.Completions-1)
		if msgs := utilvalidation.IsDNS1123Label(hostname); len(msgs) > 0 {
			allErrs = append(allErrs, field.Invalid(metadataPath.Child("name"), job.Name,
				fmt.Sprintf("will not able to create pod with invalid DNS label: %s", hostname)))
		}
	}
	return allErrs
}

// validateGeneratedSelector checks, unless the Job selects its pods
// itself (manualSelector), that the template carries the labels the
// server generated and that the selector matches them.
func validateGeneratedSelector(job *batchv1.Job, requirePrefixedLabels bool) field.ErrorList {
	if ptr.Deref(job.Spec.ManualSelector, false) || job.Spec.Selector == nil {
		// A missing selector is reported by the spec's validation.
		return nil
	}
	var allErrs field.ErrorList
	if job.UID == "" {
		allErrs = append(allErrs, field.Required(metadataPath.Child("uid"), ""))
	}
	templateMeta := specPath.Child("template", "metadata")
	uid, name := string(job.UID), job.Name
	allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, templateMeta, LegacyControllerUIDLabel, uid)...)
	allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, templateMeta, LegacyJobNameLabel, name)...)
	expected := labels.Set{LegacyControllerUIDLabel: uid, LegacyJobNameLabel: name}
	if requirePrefixedLabels {
		allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, templateMeta, batchv1.ControllerUidLabel, uid)...)
		allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, templateMeta, batchv1.JobNameLabel, name)...)
		expected[batchv1.ControllerUidLabel] = uid
		expected[batchv1.JobNameLabel] = name
	}
	if sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !sel.Matches(expected) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("selector"), job.Spec.Selector, "`selector` not auto-generated"))
	}
	return allErrs
}

// validateHasLabel is core's ValidateHasLabel: the label key must be on
// the object with the value expected.
func validateHasLabel(meta metav1.ObjectMeta, fldPath *field.Path, key, expected string) field.ErrorList {
	got, ok := meta.Labels[key]
	if !ok {
		return field.ErrorList{field.Required(fldPath.Child("labels").Key(key), expected)}
	}
	if got != expected {
		return field.ErrorList{field.Invalid(fldPath.Child("labels").Key(key), meta.Labels, fmt.Sprintf("must be '%s'", expected))}
	}
	return nil
}

// validateJobSpecWithSelector is upstream's ValidateJobSpec: the spec, a
// required and valid selector, and the selector matching the template's
// labels.
func validateJobSpecWithSelector(spec *batchv1.JobSpec, old *batchv1.JobSpec, fldPath *field.Path, opts Options) field.ErrorList {
	allErrs := validateJobSpec(spec, old, fldPath, opts)
	if spec.Selector == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector,
			metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.AllowInvalidLabelValueInSelector},
			fldPath.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels,
			"`selector` does not match template `labels`"))
	}
	return allErrs
}

// validateJobSpec checks a job spec (a Job's or a CronJob's job
// template's) without its selector.
func validateJobSpec(spec *batchv1.JobSpec, old *batchv1.JobSpec, fldPath *field.Path, opts Options) field.ErrorList {
	var allErrs field.ErrorList
	nonNegative := func(v *int32, name string) {
		if v != nil {
			allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*v), fldPath.Child(name))...)
		}
	}
	nonNegative(spec.Parallelism, "parallelism")
	nonNegative(spec.Completions, "completions")
	if spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(*spec.ActiveDeadlineSeconds, fldPath.Child("activeDeadlineSeconds"))...)
	}
	nonNegative(spec.BackoffLimit, "backoffLimit")
	nonNegative(spec.TTLSecondsAfterFinished, "ttlSecondsAfterFinished")
	nonNegative(spec.BackoffLimitPerIndex, "backoffLimitPerIndex")
	if spec.MaxFailedIndexes != nil {
		nonNegative(spec.MaxFailedIndexes, "maxFailedIndexes")
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if spec.ManagedBy != nil {
		allErrs = append(allErrs, utilvalidation.IsDomainPrefixedPath(fldPath.Child("managedBy"), *spec.ManagedBy)...)
		if len(*spec.ManagedBy) > maxManagedByLength {
			allErrs = append(allErrs, field.TooLong(fldPath.Child("managedBy"), *spec.ManagedBy, maxManagedByLength))
		}
	}
	allErrs = append(allErrs, validateCompletionMode(spec, fldPath)...)
	if spec.PodFailurePolicy != nil {
		allErrs = append(allErrs, validatePodFailurePolicy(spec, fldPath.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
		} else {
			allErrs = append(allErrs, validateSuccessPolicy(spec, fldPath.Child("successPolicy"))...)
		}
	}
	allErrs = append(allErrs, validatePodReplacementPolicy(spec, fldPath.Child("podReplacementPolicy"))...)
	var oldTemplate *corev1.PodTemplateSpec
	if old != nil {
		oldTemplate = &old.Template
	}
	allErrs = append(allErrs, opts.template(&spec.Template, oldTemplate, fldPath.Child("template"))...)
	allErrs = append(allErrs, validateRestartPolicy(spec, fldPath.Child("template", "spec", "restartPolicy"))...)
	return allErrs
}

// validateRestartPolicy: a Job's pods restart OnFailure or Never (Always,
// the pod default, is reported as missing), and only Never with a pod
// failure policy.
func validateRestartPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	allowed := []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	switch policy := spec.Template.Spec.RestartPolicy; {
	case policy == corev1.RestartPolicyAlways || policy == "":
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever))}
	case !slices.Contains(allowed, policy):
		return field.ErrorList{field.NotSupported(fldPath, policy, allowed)}
	case spec.PodFailurePolicy != nil && policy != corev1.RestartPolicyNever:
		return field.ErrorList{field.Invalid(fldPath, policy, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever))}
	}
	return nil
}

// validateCompletionMode checks the completion mode and what depends on
// it (completions and limits of Indexed Jobs, per-index fields of
// NonIndexed ones).
func validateCompletionMode(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.CompletionMode != nil {
		mode := *spec.CompletionMode
		if mode != batchv1.NonIndexedCompletion && mode != batchv1.IndexedCompletion {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("completionMode"), spec.CompletionMode,
				[]batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
		if mode == batchv1.IndexedCompletion {
			allErrs = append(allErrs, validateIndexedLimits(spec, fldPath)...)
		}
	}
	if ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.NonIndexedCompletion {
		if spec.BackoffLimitPerIndex != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	return allErrs
}

func validateIndexedLimits(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Completions == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	if spec.Parallelism != nil && *spec.Parallelism > maxParallelismForIndexedJob {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("parallelism"), *spec.Parallelism,
			fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
	}
	if spec.Completions != nil && spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > *spec.Completions {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
			fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if spec.Completions != nil && *spec.Completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
		if spec.MaxFailedIndexes == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if spec.Parallelism != nil && *spec.Parallelism > parallelismLimitForHighCompletions {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("parallelism"), *spec.Parallelism,
				fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", parallelismLimitForHighCompletions, completionsSoftLimit)))
		}
		if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
				fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
		}
	}
	return allErrs
}

func validatePodReplacementPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if spec.PodReplacementPolicy == nil {
		return nil
	}
	policy := *spec.PodReplacementPolicy
	if spec.PodFailurePolicy != nil {
		if policy != batchv1.Failed {
			return field.ErrorList{field.NotSupported(fldPath, policy, []batchv1.PodReplacementPolicy{batchv1.Failed})}
		}
		return nil
	}
	if !supportedPodReplacementPolicies.Has(policy) {
		return field.ErrorList{field.NotSupported(fldPath, policy, sets.List(supportedPodReplacementPolicies))}
	}
	return nil
}

func validatePodFailurePolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rulesPath := fldPath.Child("rules")
	rules := spec.PodFailurePolicy.Rules
	if len(rules) > maxPodFailurePolicyRules {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxPodFailurePolicyRules))
	}
	containers := sets.New[string]()
	for _, c := range spec.Template.Spec.Containers {
		containers.Insert(c.Name)
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containers.Insert(c.Name)
	}
	for i := range rules {
		allErrs = append(allErrs, validatePodFailurePolicyRule(spec, &rules[i], rulesPath.Index(i), containers)...)
	}
	return allErrs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, rulePath *field.Path, containers sets.Set[string]) field.ErrorList {
	var allErrs field.ErrorList
	actionPath := rulePath.Child("action")
	switch {
	case rule.Action == "":
		allErrs = append(allErrs, field.Required(actionPath, fmt.Sprintf("valid values: %q", sets.List(supportedPodFailurePolicyActions))))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Invalid(actionPath, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !supportedPodFailurePolicyActions.Has(rule.Action):
		allErrs = append(allErrs, field.NotSupported(actionPath, rule.Action, sets.List(supportedPodFailurePolicyActions)))
	}
	if rule.OnExitCodes != nil {
		allErrs = append(allErrs, validateOnExitCodes(rule.OnExitCodes, rulePath.Child("onExitCodes"), containers)...)
	}
	if len(rule.OnPodConditions) > 0 {
		allErrs = append(allErrs, validateOnPodConditions(rule.OnPodConditions, rulePath.Child("onPodConditions"))...)
	}
	if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
		allErrs = append(allErrs, field.Invalid(rulePath, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0 {
		allErrs = append(allErrs, field.Invalid(rulePath, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return allErrs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(patterns) > maxPodFailurePolicyOnPodConditionsPatterns {
		allErrs = append(allErrs, field.TooMany(fldPath, len(patterns), maxPodFailurePolicyOnPodConditionsPatterns))
	}
	for i, p := range patterns {
		patternPath := fldPath.Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(string(p.Type)) {
			allErrs = append(allErrs, field.Invalid(patternPath.Child("type"), string(p.Type), msg))
		}
		statusPath := patternPath.Child("status")
		switch {
		case p.Status == "":
			allErrs = append(allErrs, field.Required(statusPath, fmt.Sprintf("valid values: %q", sets.List(supportedOnPodConditionsStatuses))))
		case !supportedOnPodConditionsStatuses.Has(p.Status):
			allErrs = append(allErrs, field.NotSupported(statusPath, p.Status, sets.List(supportedOnPodConditionsStatuses)))
		}
	}
	return allErrs
}

func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, fldPath *field.Path, containers sets.Set[string]) field.ErrorList {
	var allErrs field.ErrorList
	operatorPath := fldPath.Child("operator")
	switch {
	case req.Operator == "":
		allErrs = append(allErrs, field.Required(operatorPath, fmt.Sprintf("valid values: %q", sets.List(supportedOnExitCodesOperators))))
	case !supportedOnExitCodesOperators.Has(req.Operator):
		allErrs = append(allErrs, field.NotSupported(operatorPath, req.Operator, sets.List(supportedOnExitCodesOperators)))
	}
	if req.ContainerName != nil && !containers.Has(*req.ContainerName) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("containerName"), *req.ContainerName,
			"must be one of the container or initContainer names in the pod template"))
	}
	valuesPath := fldPath.Child("values")
	switch {
	case len(req.Values) == 0:
		allErrs = append(allErrs, field.Invalid(valuesPath, req.Values, "at least one value is required"))
	case len(req.Values) > maxPodFailurePolicyOnExitCodesValues:
		allErrs = append(allErrs, field.TooMany(valuesPath, len(req.Values), maxPodFailurePolicyOnExitCodesValues))
	}
	seen := sets.New[int32]()
	ordered := true
	for i, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			allErrs = append(allErrs, field.Invalid(valuesPath.Index(i), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			allErrs = append(allErrs, field.Duplicate(valuesPath.Index(i), v))
		} else {
			seen.Insert(v)
		}
		if i > 0 && req.Values[i-1] > v {
			ordered = false
		}
	}
	if !ordered {
		allErrs = append(allErrs, field.Invalid(valuesPath, req.Values, "must be ordered"))
	}
	return allErrs
}

func validateSuccessPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rulesPath := fldPath.Child("rules")
	rules := spec.SuccessPolicy.Rules
	if len(rules) == 0 {
		allErrs = append(allErrs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRule {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxSuccessPolicyRule))
	}
	for i := range rules {
		allErrs = append(allErrs, validateSuccessPolicyRule(spec, &rules[i], rulesPath.Index(i))...)
	}
	return allErrs
}

func validateSuccessPolicyRule(spec *batchv1.JobSpec, rule *batchv1.SuccessPolicyRule, rulePath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		allErrs = append(allErrs, field.Required(rulePath, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	// An Indexed Job has completions (validated above); guard anyway so
	// that an invalid spec is an error, never a panic.
	completions := ptr.Deref(spec.Completions, 0)
	var total int32
	if rule.SucceededIndexes != nil {
		p := rulePath.Child("succeededIndexes")
		if len(*rule.SucceededIndexes) > maxJobSuccessPolicySucceededIndexesLimit {
			allErrs = append(allErrs, field.TooLong(p, *rule.SucceededIndexes, maxJobSuccessPolicySucceededIndexesLimit))
		}
		var err error
		if total, err = validateIndexesFormat(*rule.SucceededIndexes, completions); err != nil {
			allErrs = append(allErrs, field.Invalid(p, *rule.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err)))
		}
	}
	if rule.SucceededCount != nil {
		p := rulePath.Child("succeededCount")
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*rule.SucceededCount), p)...)
		if *rule.SucceededCount > completions {
			allErrs = append(allErrs, field.Invalid(p, *rule.SucceededCount,
				fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if rule.SucceededIndexes != nil && *rule.SucceededCount > total {
			allErrs = append(allErrs, field.Invalid(p, *rule.SucceededCount,
				fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
		}
	}
	return allErrs
}
