package autoscaling

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// Limits of the scaling rules.
const (
	// MaxPeriodSeconds is the longest scaling policy period.
	MaxPeriodSeconds int32 = 1800
	// MaxStabilizationWindowSeconds is the longest stabilization window.
	MaxStabilizationWindowSeconds int32 = 3600
)

// ReferenceOptions relax the apiVersion check of an object reference.
type ReferenceOptions struct {
	// AllowInvalidAPIVersion skips the apiVersion check (an update that
	// keeps a stored reference).
	AllowInvalidAPIVersion bool
	// AllowEmptyAPIGroup accepts a core-group apiVersion ("v1", or none).
	AllowEmptyAPIGroup bool
}

// Options are the switches upstream's strategy derives from feature gates
// and from the stored object.
type Options struct {
	// MinReplicasLowerBound is 0 when scaling to zero is allowed
	// (HPAScaleToZero, beta and on by default in v1.37, or a stored
	// minReplicas of 0), 1 otherwise.
	MinReplicasLowerBound int32
	// ScaleTargetRef and ObjectMetrics relax the apiVersion checks of the
	// scale target and of Object metrics' described objects.
	ScaleTargetRef ReferenceOptions
	ObjectMetrics  ReferenceOptions
}

// OptionsFor returns upstream's options for hpa, updating old (nil on
// create).
func OptionsFor(hpa, old *autoscalingv2.HorizontalPodAutoscaler) Options {
	// HPAScaleToZero is on: the lower bound is 0 on create and update alike.
	opts := Options{MinReplicasLowerBound: 0, ObjectMetrics: ReferenceOptions{AllowEmptyAPIGroup: true}}
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == hpa.Spec.ScaleTargetRef.APIVersion && old.Spec.ScaleTargetRef.Kind == hpa.Spec.ScaleTargetRef.Kind:
		// An update that keeps the target's kind and apiVersion.
		opts.ScaleTargetRef.AllowInvalidAPIVersion = true
	case hpa.Spec.ScaleTargetRef.Kind == "ReplicationController":
		// The one scalable kind of the core group.
		opts.ScaleTargetRef.AllowEmptyAPIGroup = true
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && validateAPIVersion(m.Object.DescribedObject, opts.ObjectMetrics) != "" {
				// The stored metrics are already invalid.
				opts.ObjectMetrics.AllowInvalidAPIVersion = true
				break
			}
		}
	}
	return opts
}

var specPath = field.NewPath("spec")

// ValidateHorizontalPodAutoscaler checks a new autoscaler, its metadata
// included.
func ValidateHorizontalPodAutoscaler(hpa *autoscalingv2.HorizontalPodAutoscaler, opts Options) field.ErrorList {
	allErrs := validation.ValidateObjectMeta(&hpa.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateSpec(&hpa.Spec, specPath, opts)...)
}

// ValidateHorizontalPodAutoscalerFields checks a new or updated autoscaler
// but for the generic metadata rules (create and update check the same).
func ValidateHorizontalPodAutoscalerFields(hpa *autoscalingv2.HorizontalPodAutoscaler, opts Options) field.ErrorList {
	allErrs := validation.ValidateKubeFinalizerNames(hpa.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateSpec(&hpa.Spec, specPath, opts)...)
}

// ValidateHorizontalPodAutoscalerStatusFields checks a status update:
// replica counts are not negative.
func ValidateHorizontalPodAutoscalerStatusFields(hpa *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	status := field.NewPath("status")
	allErrs := apimachineryvalidation.ValidateNonnegativeField(int64(hpa.Status.CurrentReplicas), status.Child("currentReplicas"))
	return append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(hpa.Status.DesiredReplicas), status.Child("desiredReplicas"))...)
}

func validateSpec(spec *autoscalingv2.HorizontalPodAutoscalerSpec, fldPath *field.Path, opts Options) field.ErrorList {
	var allErrs field.ErrorList
	// minReplicas (+k8s:minimum, by HPAScaleToZero) and maxReplicas
	// (+k8s:required, +k8s:minimum=1) are beta declarative rules upstream
	// (k8s.io/kubernetes@v1.37.2 pkg/apis/autoscaling/v{1,2}/
	// zz_generated.validations.go): their errors come last, in the
	// declarative validators' words.
	if spec.MinReplicas != nil && *spec.MinReplicas < opts.MinReplicasLowerBound {
		allErrs = append(allErrs, declarative.Minimum(fldPath.Child("minReplicas"), *spec.MinReplicas, opts.MinReplicasLowerBound))
	}
	if spec.MaxReplicas == 0 {
		allErrs = append(allErrs, declarative.Required(fldPath.Child("maxReplicas")))
	} else if spec.MaxReplicas < 1 {
		allErrs = append(allErrs, declarative.Minimum(fldPath.Child("maxReplicas"), spec.MaxReplicas, 1))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	allErrs = append(allErrs, ValidateCrossVersionObjectReference(spec.ScaleTargetRef, fldPath.Child("scaleTargetRef"), opts.ScaleTargetRef)...)
	allErrs = append(allErrs, validateMetrics(spec.Metrics, fldPath.Child("metrics"), spec.MinReplicas, opts)...)
	allErrs = append(allErrs, validateBehavior(spec.Behavior, fldPath.Child("behavior"))...)
	return allErrs
}

// ValidateCrossVersionObjectReference checks a reference: kind and name
// required and usable in a path, apiVersion parseable and, unless allowed,
// of a named group.
func ValidateCrossVersionObjectReference(ref autoscalingv2.CrossVersionObjectReference, fldPath *field.Path, opts ReferenceOptions) field.ErrorList {
	var allErrs field.ErrorList
	if ref.Kind == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("kind"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Kind) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), ref.Name, msg))
		}
	}
	if msg := validateAPIVersion(ref, opts); msg != "" {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersion"), ref.APIVersion, msg))
	}
	return allErrs
}

// validateAPIVersion returns what is wrong with a reference's apiVersion,
// or "", in upstream's words (ValidateAPIVersion).
func validateAPIVersion(ref autoscalingv2.CrossVersionObjectReference, opts ReferenceOptions) string {
	if opts.AllowInvalidAPIVersion {
		return ""
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err.Error()
	}
	if gv.Group == "" && !opts.AllowEmptyAPIGroup {
		return "apiVersion must specify API group"
	}
	return ""
}

func validateMetrics(metrics []autoscalingv2.MetricSpec, fldPath *field.Path, minReplicas *int32, opts Options) field.ErrorList {
	var allErrs field.ErrorList
	hasObjectOrExternal := false
	for i := range metrics {
		allErrs = append(allErrs, validateMetricSpec(&metrics[i], fldPath.Index(i), opts)...)
		if t := metrics[i].Type; t == autoscalingv2.ObjectMetricSourceType || t == autoscalingv2.ExternalMetricSourceType {
			hasObjectOrExternal = true
		}
	}
	if minReplicas != nil && *minReplicas == 0 && !hasObjectOrExternal {
		allErrs = append(allErrs, field.Forbidden(fldPath, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return allErrs
}

func validateBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, fldPath *field.Path) field.ErrorList {
	if b == nil {
		return nil
	}
	allErrs := validateScalingRules(b.ScaleUp, fldPath.Child("scaleUp"))
	return append(allErrs, validateScalingRules(b.ScaleDown, fldPath.Child("scaleDown"))...)
}

var validSelectPolicies = sets.New(string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect), string(autoscalingv2.DisabledPolicySelect))

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, fldPath *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var allErrs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil {
		if *w < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
		}
		if *w > MaxStabilizationWindowSeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w,
				fmt.Sprintf("must be less than or equal to %v", MaxStabilizationWindowSeconds)))
		}
	}
	if rules.SelectPolicy != nil && !validSelectPolicies.Has(string(*rules.SelectPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("selectPolicy"), rules.SelectPolicy, sets.List(validSelectPolicies)))
	}
	if rules.Tolerance != nil && rules.Tolerance.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("tolerance"), rules.Tolerance, "must be greater than or equal to zero"))
	}
	policies := fldPath.Child("policies")
	if len(rules.Policies) == 0 {
		allErrs = append(allErrs, field.Required(policies, "must specify at least one Policy"))
	}
	for i, p := range rules.Policies {
		allErrs = append(allErrs, validateScalingPolicy(p, policies.Index(i))...)
	}
	return allErrs
}

var validPolicyTypes = sets.New(string(autoscalingv2.PodsScalingPolicy), string(autoscalingv2.PercentScalingPolicy))

func validateScalingPolicy(p autoscalingv2.HPAScalingPolicy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !validPolicyTypes.Has(string(p.Type)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), p.Type, sets.List(validPolicyTypes)))
	}
	if p.Value <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), p.Value, "must be greater than zero"))
	}
	if p.PeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("periodSeconds"), p.PeriodSeconds, "must be greater than zero"))
	}
	if p.PeriodSeconds > MaxPeriodSeconds {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("periodSeconds"), p.PeriodSeconds,
			fmt.Sprintf("must be less than or equal to %v", MaxPeriodSeconds)))
	}
	return allErrs
}

var validMetricSourceTypes = sets.New(
	string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType),
	string(autoscalingv2.ResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
	string(autoscalingv2.ContainerResourceMetricSourceType))

func validateMetricSpec(spec *autoscalingv2.MetricSpec, fldPath *field.Path, opts Options) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Type == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must specify a metric source type"))
	}
	if !validMetricSourceTypes.Has(string(spec.Type)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, sets.List(validMetricSourceTypes)))
	}
	// The first source set is validated; any other is reported below.
	present := []string{}
	if spec.Object != nil {
		present = append(present, "object")
		if len(present) == 1 {
			allErrs = append(allErrs, validateObjectSource(spec.Object, fldPath.Child("object"), opts)...)
		}
	}
	if spec.External != nil {
		present = append(present, "external")
		if len(present) == 1 {
			allErrs = append(allErrs, validateExternalSource(spec.External, fldPath.Child("external"))...)
		}
	}
	if spec.Pods != nil {
		present = append(present, "pods")
		if len(present) == 1 {
			allErrs = append(allErrs, validatePodsSource(spec.Pods, fldPath.Child("pods"))...)
		}
	}
	if spec.Resource != nil {
		present = append(present, "resource")
		if len(present) == 1 {
			allErrs = append(allErrs, validateResourceSource(spec.Resource.Name, spec.Resource.Target, fldPath.Child("resource"))...)
		}
	}
	if spec.ContainerResource != nil {
		present = append(present, "containerResource")
		if len(present) == 1 {
			allErrs = append(allErrs, validateContainerResourceSource(spec.ContainerResource, fldPath.Child("containerResource"))...)
		}
	}
	const populate = "must populate information for the given metric source"
	var expected string
	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("object"), populate))
		}
		expected = "object"
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("pods"), populate))
		}
		expected = "pods"
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("resource"), populate))
		}
		expected = "resource"
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("external"), populate))
		}
		expected = "external"
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("containerResource"), populate))
		}
		expected = "containerResource"
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, sets.List(validMetricSourceTypes)))
	}
	if len(present) != 1 {
		// Upstream walks a set here: the order of these errors is not
		// defined; kapi reports them sorted.
		others := sets.New(present...)
		others.Delete(expected)
		for _, name := range sets.List(others) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "must populate the given metric source only"))
		}
	}
	return allErrs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, fldPath *field.Path, opts Options) field.ErrorList {
	allErrs := ValidateCrossVersionObjectReference(src.DescribedObject, fldPath.Child("describedObject"), opts.ObjectMetrics)
	allErrs = append(allErrs, validateMetricIdentifier(src.Metric, fldPath.Child("metric"))...)
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return allErrs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return allErrs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return allErrs
}

func validateResourceSource(name corev1.ResourceName, target autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	}
	return append(allErrs, validateUtilizationOrValue(target, fldPath)...)
}

func validateUtilizationOrValue(target autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricTarget(target, fldPath.Child("target"))
	if target.AverageUtilization == nil && target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageUtilization != nil && target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return allErrs
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if src.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	} else {
		allErrs = append(allErrs, validateContainerResourceName(string(src.Name), fldPath.Child("name"))...)
	}
	if src.Container == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("container"), "must specify a container"))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Label(src.Container) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("container"), src.Container, msg))
		}
	}
	return append(allErrs, validateUtilizationOrValue(src.Target, fldPath)...)
}

// validateContainerResourceName is core's v1 check of a container
// resource name: a qualified name, and a standard container resource
// unless it has a domain.
func validateContainerResourceName(name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(name, "/") && !standardContainerResource(name) {
		return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
	}
	return allErrs
}

func standardContainerResource(name string) bool {
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	return strings.HasPrefix(name, corev1.ResourceHugePagesPrefix)
}

func validateMetricTarget(mt autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if mt.Type == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must specify a metric target type"))
	}
	if mt.Type != autoscalingv2.UtilizationMetricType && mt.Type != autoscalingv2.ValueMetricType && mt.Type != autoscalingv2.AverageValueMetricType {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), mt.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if mt.Value != nil && mt.Value.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), mt.Value, "must be positive"))
	}
	if mt.AverageValue != nil && mt.AverageValue.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("averageValue"), mt.AverageValue, "must be positive"))
	}
	if mt.AverageUtilization != nil && *mt.AverageUtilization < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("averageUtilization"), mt.AverageUtilization, "must be greater than 0"))
	}
	return allErrs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, fldPath *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "must specify a metric name")}
	}
	var allErrs field.ErrorList
	for _, msg := range path.IsValidPathSegmentName(id.Name) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), id.Name, msg))
	}
	return allErrs
}
