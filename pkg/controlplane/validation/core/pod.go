package core

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/internaljson"
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
	statusPath   = field.NewPath("status")
)

// updatablePodSpecFields are what a pod update may change, as upstream's
// message lists them.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// metaErrors is the metadata validation of a whole object (withMeta) or
// only the core-specific finalizer rule (the generic store does the rest).
func metaErrors(m, old *metav1.ObjectMeta, withMeta bool) field.ErrorList {
	switch {
	case !withMeta:
		return kvalidation.ValidateKubeFinalizerNames(m.Finalizers, metadataPath.Child("finalizers"))
	case old == nil:
		return kvalidation.ValidateObjectMeta(m, true, ValidatePodName, metadataPath)
	default:
		return kvalidation.ValidateObjectMetaUpdate(m, old, metadataPath)
	}
}

// validatePodMetadataAndSpec is what every pod write checks: metadata,
// pod annotations, the spec, and the pod-only rules (service account
// tokens need a service account; no whitespace around images).
func validatePodMetadataAndSpec(pod *corev1.Pod, withMeta bool, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if withMeta {
		allErrs = kvalidation.ValidateObjectMeta(&pod.ObjectMeta, true, ValidatePodName, metadataPath)
	}
	allErrs = append(allErrs, ValidatePodSpecificAnnotations(pod.Annotations, &pod.Spec, metadataPath.Child("annotations"), opts)...)
	allErrs = append(allErrs, ValidatePodSpec(&pod.Spec, &pod.ObjectMeta, specPath, opts)...)
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected").Child("sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	for i := range pod.Spec.Containers {
		allErrs = append(allErrs, validateContainerOnlyForPod(&pod.Spec.Containers[i], specPath.Child("containers").Index(i))...)
	}
	for i := range pod.Spec.InitContainers {
		allErrs = append(allErrs, validateContainerOnlyForPod(&pod.Spec.InitContainers[i], specPath.Child("initContainers").Index(i))...)
	}
	return allErrs
}

// ValidatePod checks a new pod, metadata included (upstream's
// ValidatePodCreate).
func ValidatePod(pod *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	return validatePodCreate(pod, true, opts)
}

// ValidatePodFields checks a new pod but for the generic metadata rules.
func ValidatePodFields(pod *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pod.ObjectMeta, nil, false)
	return append(allErrs, validatePodCreate(pod, false, opts)...)
}

func validatePodCreate(pod *corev1.Pod, withMeta bool, opts PodValidationOptions) field.ErrorList {
	allErrs := validatePodMetadataAndSpec(pod, withMeta, opts)
	if len(pod.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	allErrs = append(allErrs, validateSeccompAnnotationsAndFields(pod.ObjectMeta, &pod.Spec, specPath)...)
	return append(allErrs, validateAppArmorAnnotationsAndFieldsMatchOnCreate(pod.ObjectMeta, &pod.Spec, specPath)...)
}

// ValidatePodUpdate checks an update of a pod by a user, metadata
// included: most of the spec is immutable (only images, the active
// deadline (lowered), tolerations (added), scheduling gates (removed) and,
// for gated pods, node selector and affinity additions may change).
func ValidatePodUpdate(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	return validatePodUpdate(pod, old, true, opts)
}

// ValidatePodUpdateFields is [ValidatePodUpdate] but for the generic
// metadata rules.
func ValidatePodUpdateFields(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pod.ObjectMeta, &old.ObjectMeta, false)
	return append(allErrs, validatePodUpdate(pod, old, false, opts)...)
}

func validatePodUpdate(pod, old *corev1.Pod, withMeta bool, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if withMeta {
		allErrs = metaErrors(&pod.ObjectMeta, &old.ObjectMeta, true)
	}
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod, false, opts)...)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(pod, old, metadataPath.Child("annotations"))...)

	errs, stop := validateContainerUpdates(pod.Spec.Containers, old.Spec.Containers, specPath.Child("containers"))
	allErrs = append(allErrs, errs...)
	if stop {
		return allErrs
	}
	errs, stop = validateContainerUpdates(pod.Spec.InitContainers, old.Spec.InitContainers, specPath.Child("initContainers"))
	allErrs = append(allErrs, errs...)
	if stop {
		return allErrs
	}
	// activeDeadlineSeconds may be set, or lowered, never unset.
	deadlinePath := specPath.Child("activeDeadlineSeconds")
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil {
		if *d < 0 || *d > math.MaxInt32 {
			return append(allErrs, field.Invalid(deadlinePath, *d, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if o := old.Spec.ActiveDeadlineSeconds; o != nil && *o < *d {
			return append(allErrs, field.Invalid(deadlinePath, *d, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(deadlinePath, pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}
	allErrs = append(allErrs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)
	if equality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return allErrs
	}

	// Put back what may change and compare the rest.
	munged := *pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = nil
	if old.Spec.ActiveDeadlineSeconds != nil {
		v := *old.Spec.ActiveDeadlineSeconds
		munged.ActiveDeadlineSeconds = &v
	}
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if o := old.Spec.TerminationGracePeriodSeconds; o != nil && *o < 0 && munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = o
	}
	if len(old.Spec.SchedulingGates) > 0 {
		// Gated pods may gain node selector and required node affinity
		// constraints.
		if !equality.Semantic.DeepEqual(munged.NodeSelector, old.Spec.NodeSelector) {
			allErrs = append(allErrs, validateNodeSelectorMutation(specPath.Child("nodeSelector"), munged.NodeSelector, old.Spec.NodeSelector)...)
			munged.NodeSelector = old.Spec.NodeSelector
		}
		var oldNA, newNA *corev1.NodeAffinity
		if old.Spec.Affinity != nil {
			oldNA = old.Spec.Affinity.NodeAffinity
		}
		if munged.Affinity != nil {
			newNA = munged.Affinity.NodeAffinity
		}
		if !equality.Semantic.DeepEqual(oldNA, newNA) {
			allErrs = append(allErrs, validateNodeAffinityMutation(specPath.Child("affinity").Child("nodeAffinity"), newNA, oldNA)...)
			switch {
			case munged.Affinity == nil && oldNA == nil:
			case munged.Affinity == nil && oldNA != nil:
				munged.Affinity = &corev1.Affinity{NodeAffinity: oldNA}
			case munged.Affinity != nil && old.Spec.Affinity == nil && munged.Affinity.PodAntiAffinity == nil && munged.Affinity.PodAffinity == nil:
				munged.Affinity = nil
			default:
				munged.Affinity.NodeAffinity = oldNA
			}
		}
	}
	if !equality.Semantic.DeepEqual(munged, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields, ","), specDiff(old.Spec, munged))))
	}
	return allErrs
}

// specDiff is upstream's diff.Diff of two values for error messages: a
// unified diff of the indented JSON of their internal types.
func specDiff(a, b any) string {
	return internaljson.Diff(a, b)
}

// validateContainerUpdates: containers may not be added or removed (stop
// is then true) and keep an image without surrounding whitespace.
func validateContainerUpdates(containers, old []corev1.Container, fldPath *field.Path) (field.ErrorList, bool) {
	if len(containers) != len(old) {
		return field.ErrorList{field.Forbidden(fldPath, "pod updates may not add or remove containers")}, true
	}
	var allErrs field.ErrorList
	for i, c := range containers {
		if c.Image == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i).Child("image"), ""))
		}
		if len(strings.TrimSpace(c.Image)) != len(c.Image) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return allErrs, false
}

// validatePodSpecificAnnotationUpdates: AppArmor and mirror pod
// annotations cannot be added, changed or removed.
func validatePodSpecificAnnotationUpdates(pod, old *corev1.Pod, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, k := range sortedKeys(old.Annotations) {
		if v, ok := pod.Annotations[k]; ok && v == old.Annotations[k] {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for _, k := range sortedKeys(pod.Annotations) {
		if _, ok := old.Annotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not add AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not add mirror pod annotation"))
		}
	}
	return allErrs
}

// validateOnlyAddedTolerations: existing tolerations stay (their
// tolerationSeconds may change); new ones are validated.
func validateOnlyAddedTolerations(tolerations, old []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range tolerations {
			oc := o
			oc.TolerationSeconds = t.TolerationSeconds
			if reflect.DeepEqual(oc, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return ValidateTolerations(tolerations, fldPath)
}

// validateOnlyDeletedSchedulingGates: no gate may be added.
func validateOnlyDeletedSchedulingGates(gates, old []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	oldNames := map[string]bool{}
	for _, g := range old {
		oldNames[g.Name] = true
	}
	for i, g := range gates {
		if !oldNames[g.Name] {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return allErrs
}

func validateNodeSelectorMutation(fldPath *field.Path, selector, old map[string]string) field.ErrorList {
	for k, v := range old {
		if nv, ok := selector[k]; !ok || nv != v {
			return field.ErrorList{field.Invalid(fldPath, selector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)")}
		}
	}
	return nil
}

func validateNodeAffinityMutation(p *field.Path, na, old *corev1.NodeAffinity) field.ErrorList {
	if old == nil || old.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	oldTerms := old.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var terms []corev1.NodeSelectorTerm
	if na != nil && na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	termsPath := p.Child("requiredDuringSchedulingIgnoredDuringExecution").Child("nodeSelectorTerms")
	if len(oldTerms) > 0 && len(oldTerms) != len(terms) {
		return field.ErrorList{field.Invalid(termsPath, terms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")}
	}
	var allErrs field.ErrorList
	for i := range oldTerms {
		if !onlyAdditions(terms[i], oldTerms[i]) {
			allErrs = append(allErrs, field.Invalid(termsPath.Index(i), terms[i], "only additions are allowed (no mutations or deletions)"))
		}
	}
	return allErrs
}

func onlyAdditions(term, old corev1.NodeSelectorTerm) bool {
	if len(old.MatchExpressions) == 0 && len(old.MatchFields) == 0 && (len(term.MatchExpressions) > 0 || len(term.MatchFields) > 0) {
		return false
	}
	if l := len(old.MatchExpressions); l > 0 && (len(term.MatchExpressions) < l || !equality.Semantic.DeepEqual(term.MatchExpressions[:l], old.MatchExpressions)) {
		return false
	}
	if l := len(old.MatchFields); l > 0 && (len(term.MatchFields) < l || !equality.Semantic.DeepEqual(term.MatchFields[:l], old.MatchFields)) {
		return false
	}
	return true
}

// ValidatePodStatusUpdate checks an update of a pod's status, metadata
// included: node name and QoS class unchanged, terminated containers stay
// terminated when the pod does not restart them, valid IPs and
// conditions.
func ValidatePodStatusUpdate(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pod.ObjectMeta, &old.ObjectMeta, true)
	return append(allErrs, validatePodStatusUpdate(pod, old)...)
}

// ValidatePodStatusUpdateFields is [ValidatePodStatusUpdate] but for the
// generic metadata rules.
func ValidatePodStatusUpdateFields(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pod.ObjectMeta, &old.ObjectMeta, false)
	return append(allErrs, validatePodStatusUpdate(pod, old)...)
}

func validatePodStatusUpdate(pod, old *corev1.Pod) field.ErrorList {
	allErrs := validatePodSpecificAnnotationUpdates(pod, old, metadataPath.Child("annotations"))
	allErrs = append(allErrs, validatePodConditions(pod.Status.Conditions, metadataPath.Child("conditions"))...)
	if pod.Spec.NodeName != old.Spec.NodeName {
		allErrs = append(allErrs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	if n := pod.Status.NominatedNodeName; n != old.Status.NominatedNodeName && n != "" {
		allErrs = append(allErrs, nameErrors(validateNodeName, n, statusPath.Child("nominatedNodeName"))...)
	}
	allErrs = append(allErrs, kvalidation.ValidateImmutableField(pod.Status.QOSClass, old.Status.QOSClass, statusPath.Child("qosClass"))...)
	allErrs = append(allErrs, validateContainerStateTransition(pod.Status.ContainerStatuses, old.Status.ContainerStatuses, statusPath.Child("containerStatuses"), &old.Spec, old.Spec.Containers)...)
	allErrs = append(allErrs, validateContainerStateTransition(pod.Status.InitContainerStatuses, old.Status.InitContainerStatuses, statusPath.Child("initContainerStatuses"), &old.Spec, old.Spec.InitContainers)...)
	allErrs = append(allErrs, validateEphemeralContainerStateTransition(pod.Status.EphemeralContainerStatuses, old.Status.EphemeralContainerStatuses, statusPath.Child("ephemeralContainerStatuses"))...)
	allErrs = append(allErrs, validatePodResourceClaimStatuses(pod.Status.ResourceClaimStatuses, pod.Spec.ResourceClaims, statusPath.Child("resourceClaimStatuses"))...)
	allErrs = append(allErrs, validatePodIPs(pod)...)
	allErrs = append(allErrs, validateHostIPs(pod)...)
	for _, cs := range []struct {
		list []corev1.ContainerStatus
		name string
	}{{pod.Status.ContainerStatuses, "containerStatuses"}, {pod.Status.InitContainerStatuses, "initContainerStatuses"}, {pod.Status.EphemeralContainerStatuses, "ephemeralContainerStatuses"}} {
		allErrs = append(allErrs, validateContainerStatusUsers(cs.list, statusPath.Child(cs.name), pod.Spec.OS)...)
	}
	for i, cs := range pod.Status.EphemeralContainerStatuses {
		if len(cs.AllocatedResourcesStatus) > 0 {
			allErrs = append(allErrs, field.Forbidden(statusPath.Child("ephemeralContainerStatuses").Index(i).Child("allocatedResourcesStatus"), "must not be specified in container status"))
		}
	}
	return allErrs
}

// validatePodConditions: conditions other than kube's own have qualified
// names (upstream's path is metadata.conditions[i].Type).
func validatePodConditions(conditions []corev1.PodCondition, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range conditions {
		switch c.Type {
		case corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized:
			continue
		}
		allErrs = append(allErrs, ValidateQualifiedName(string(c.Type), fldPath.Index(i).Child("Type"))...)
	}
	return allErrs
}

// validateContainerStateTransition: a terminated container may go back
// to another state only if it would be restarted (upstream's
// Validate(Init)ContainerStateTransition with ContainerRestartRules on,
// as at v1.37): its restart rules, else its own restart policy, else the
// pod's; or any container's rule restarts all containers. containers is
// the list (regular or init) of the old spec that the statuses describe.
func validateContainerStateTransition(statuses, old []corev1.ContainerStatus, fldPath *field.Path, spec *corev1.PodSpec, containers []corev1.Container) field.ErrorList {
	if allContainersCouldRestart(spec) {
		return nil
	}
	var allErrs field.ErrorList
	for i, o := range old {
		if o.State.Terminated == nil {
			continue
		}
		for _, s := range statuses {
			if s.Name != o.Name || s.State.Terminated != nil {
				continue
			}
			allowed := false
			for j := range containers {
				if containers[j].Name == o.Name {
					allowed = containerShouldRestart(&containers[j], spec.RestartPolicy, o.State.Terminated.ExitCode)
					break
				}
			}
			if !allowed {
				allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
			break
		}
	}
	return allErrs
}

// validateEphemeralContainerStateTransition: a terminated ephemeral
// container stays terminated.
func validateEphemeralContainerStateTransition(statuses, old []corev1.ContainerStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, o := range old {
		if o.State.Terminated == nil {
			continue
		}
		for _, s := range statuses {
			if s.Name == o.Name && s.State.Terminated == nil {
				allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return allErrs
}

// allContainersCouldRestart: some init or regular container has a
// RestartAllContainers rule.
func allContainersCouldRestart(spec *corev1.PodSpec) bool {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			for _, r := range list[i].RestartPolicyRules {
				if r.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// containerShouldRestart: whether a container that exited with exitCode
// is restarted: the first matching rule, else the container's restart
// policy, else the pod's (Always when unset).
func containerShouldRestart(c *corev1.Container, podPolicy corev1.RestartPolicy, exitCode int32) bool {
	if c.RestartPolicy != nil {
		for _, r := range c.RestartPolicyRules {
			if r.ExitCodes == nil {
				continue
			}
			matched := slices.Contains(r.ExitCodes.Values, exitCode)
			op := r.ExitCodes.Operator
			if op == corev1.ContainerRestartRuleOnExitCodesOpIn && matched || op == corev1.ContainerRestartRuleOnExitCodesOpNotIn && !matched {
				if r.Action == corev1.ContainerRestartRuleActionRestart || r.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
				break
			}
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch podPolicy {
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	case corev1.RestartPolicyNever:
		return false
	}
	return true
}

func validatePodResourceClaimStatuses(statuses []corev1.PodResourceClaimStatus, claims []corev1.PodResourceClaim, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, s := range statuses {
		p := fldPath.Index(i)
		found := false
		for _, c := range claims {
			found = found || c.Name == s.Name
		}
		if !found {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), s.Name, "must match the name of an entry in `spec.resourceClaims`"))
		}
		if seen[s.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), s.Name))
		}
		seen[s.Name] = true
		if s.ResourceClaimName != nil {
			for _, msg := range validateClassName(*s.ResourceClaimName, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), s.ResourceClaimName, msg))
			}
		}
	}
	return allErrs
}

// validatePodIPs: valid IPs, at most one per family, no duplicates.
func validatePodIPs(pod *corev1.Pod) field.ErrorList {
	ips := make([]string, 0, len(pod.Status.PodIPs))
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	return validateIPList(ips, pod.Status.PodIPs, statusPath.Child("podIPs"), func(i int) any { return pod.Status.PodIPs[i] })
}

// validateHostIPs: as podIPs, and hostIPs[0] is hostIP.
func validateHostIPs(pod *corev1.Pod) field.ErrorList {
	if len(pod.Status.HostIPs) == 0 {
		return nil
	}
	p := statusPath.Child("hostIPs")
	var allErrs field.ErrorList
	if pod.Status.HostIP != pod.Status.HostIPs[0].IP {
		allErrs = append(allErrs, field.Invalid(p.Index(0).Child("ip"), pod.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
	}
	ips := make([]string, 0, len(pod.Status.HostIPs))
	for _, ip := range pod.Status.HostIPs {
		ips = append(ips, ip.IP)
	}
	return append(allErrs, validateIPList(ips, pod.Status.HostIPs, p, func(i int) any { return pod.Status.HostIPs[i] })...)
}

func validateIPList(ips []string, value any, p *field.Path, item func(int) any) field.ErrorList {
	var allErrs field.ErrorList
	for i, ip := range ips {
		allErrs = append(allErrs, validation.IsValidIP(p.Index(i), ip)...)
	}
	if len(ips) <= 1 {
		return allErrs
	}
	seen := map[string]bool{}
	v4, v6 := 0, 0
	for i, ip := range ips {
		if seen[ip] {
			allErrs = append(allErrs, field.Duplicate(p.Index(i), item(i)))
		}
		seen[ip] = true
		if strings.Contains(ip, ":") {
			v6++
		} else {
			v4++
		}
	}
	if len(ips) > 2 || v4 != 1 || v6 != 1 {
		allErrs = append(allErrs, field.Invalid(p, value, "may specify no more than one IP for each IP family"))
	}
	return allErrs
}

func validateContainerStatusUsers(statuses []corev1.ContainerStatus, fldPath *field.Path, os *corev1.PodOS) field.ErrorList {
	var allErrs field.ErrorList
	osName := corev1.Linux
	if os != nil {
		osName = os.Name
	}
	for i, cs := range statuses {
		if cs.User == nil {
			continue
		}
		p := fldPath.Index(i).Child("linux")
		switch osName {
		case corev1.Windows:
			if cs.User.Linux != nil {
				allErrs = append(allErrs, field.Forbidden(p, "cannot be set for a windows pod"))
			}
		case corev1.Linux:
			if u := cs.User.Linux; u != nil {
				for _, msg := range validation.IsValidUserID(u.UID) {
					allErrs = append(allErrs, field.Invalid(p.Child("uid"), u.UID, msg))
				}
				for _, msg := range validation.IsValidGroupID(u.GID) {
					allErrs = append(allErrs, field.Invalid(p.Child("gid"), u.GID, msg))
				}
				for g, gid := range u.SupplementalGroups {
					for _, msg := range validation.IsValidGroupID(gid) {
						allErrs = append(allErrs, field.Invalid(p.Child("supplementalGroups").Index(g), gid, msg))
					}
				}
			}
		}
	}
	return allErrs
}

// ValidatePodEphemeralContainersUpdate checks an update through
// pods/ephemeralcontainers, metadata included: ephemeral containers may
// be added, never changed or removed; static pods have none.
func ValidatePodEphemeralContainersUpdate(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	return validateEphemeralContainersUpdate(pod, old, true, opts)
}

// ValidatePodEphemeralContainersUpdateFields is
// [ValidatePodEphemeralContainersUpdate] but for the generic metadata
// rules.
func ValidatePodEphemeralContainersUpdateFields(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pod.ObjectMeta, &old.ObjectMeta, false)
	return append(allErrs, validateEphemeralContainersUpdate(pod, old, false, opts)...)
}

func validateEphemeralContainersUpdate(pod, old *corev1.Pod, withMeta bool, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if withMeta {
		allErrs = metaErrors(&pod.ObjectMeta, &old.ObjectMeta, true)
	}
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod, false, opts)...)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(pod, old, metadataPath.Child("annotations"))...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	p := specPath.Child("ephemeralContainers")
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		if !ok {
			allErrs = append(allErrs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		} else if !equality.Semantic.DeepEqual(o, *n) {
			allErrs = append(allErrs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", o.Name, specDiff(o, *n))))
		}
	}
	return allErrs
}

// ValidatePodResize checks an update through pods/resize, metadata
// included, as kube-apiserver v1.37.2: only the cpu and memory of
// containers, init containers and the pod-level resources change, without
// changing the QoS class, reordering containers or removing requests or
// limits.
func ValidatePodResize(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	return validatePodResize(pod, old, true, opts)
}

// ValidatePodResizeFields is [ValidatePodResize] but for the generic
// metadata rules.
func ValidatePodResizeFields(pod, old *corev1.Pod, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pod.ObjectMeta, &old.ObjectMeta, false)
	return append(allErrs, validatePodResize(pod, old, false, opts)...)
}

func validatePodResize(pod, old *corev1.Pod, withMeta bool, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if withMeta {
		allErrs = metaErrors(&pod.ObjectMeta, &old.ObjectMeta, true)
	}
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod, false, opts)...)
	root := field.NewPath("")
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(root, "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(root, "windows pods cannot be resized")}
	}
	oldQOS := old.Status.QOSClass
	if oldQOS == "" {
		oldQOS = defaultscorev1.PodQOSClass(old)
	}
	if oldQOS != defaultscorev1.PodQOSClass(pod) {
		allErrs = append(allErrs, field.Invalid(specPath, pod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(old) {
		allErrs = append(allErrs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	munged := *pod.Spec.DeepCopy()
	podLevel := func(p *corev1.Pod) bool {
		return p.Spec.Resources != nil && len(p.Spec.Resources.Requests)+len(p.Spec.Resources.Limits) > 0
	}
	// InPlacePodLevelResourcesVerticalScaling is beta and on in v1.37.
	if podLevel(old) || podLevel(pod) {
		allErrs = append(allErrs, validatePodLevelResourcesResize(pod, old, &munged)...)
	}
	if errs := validatePodResizeContainerOrdering(pod, old); errs != nil {
		return append(allErrs, errs...)
	}
	// InPlacePodVerticalScalingInitContainers is GA in v1.37: every init
	// container may be resized.
	for i := range old.Spec.InitContainers {
		allErrs = append(allErrs, validateContainerResize(&pod.Spec.InitContainers[i], &old.Spec.InitContainers[i],
			specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		allErrs = append(allErrs, validateContainerResize(&pod.Spec.Containers[i], &old.Spec.Containers[i], specPath.Child("containers").Index(i).Child("resources"))...)
	}
	for i := range munged.Containers {
		dropCPUMemory(&munged.Containers[i], &old.Spec.Containers[i])
		if !equality.Semantic.DeepEqual(munged.Containers[i], old.Spec.Containers[i]) {
			allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range munged.InitContainers {
		c := &munged.InitContainers[i]
		modified := !equality.Semantic.DeepEqual(*c, old.Spec.InitContainers[i])
		dropCPUMemory(c, &old.Spec.InitContainers[i])
		p := specPath.Child("initContainers").Index(i)
		if !equality.Semantic.DeepEqual(*c, old.Spec.InitContainers[i]) {
			allErrs = append(allErrs, field.Forbidden(p, "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if modified && !isRestartableInitContainer(c) {
			for _, rp := range c.ResizePolicy {
				if rp.RestartPolicy == corev1.RestartContainer {
					allErrs = append(allErrs, field.Forbidden(p, "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	// InPlacePodVerticalScalingMemoryBackedVolumes is alpha and off.
	if !equality.Semantic.DeepEqual(pod.Spec.Volumes, old.Spec.Volumes) {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes"), "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	if !equality.Semantic.DeepEqual(munged, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return allErrs
}

// validatePodResizeContainerOrdering: a resize neither adds, removes,
// reorders nor renames containers.
func validatePodResizeContainerOrdering(pod, old *corev1.Pod) field.ErrorList {
	var allErrs field.ErrorList
	check := func(list, oldList []corev1.Container, name string) {
		p := specPath.Child(name)
		if len(list) != len(oldList) {
			allErrs = append(allErrs, field.Forbidden(p, name+" may not be added or removed on resize"))
			return
		}
		for i := range oldList {
			if list[i].Name != oldList[i].Name {
				allErrs = append(allErrs, field.Forbidden(p.Index(i).Child("name"), name+" may not be renamed or reordered on resize"))
			}
		}
	}
	check(pod.Spec.Containers, old.Spec.Containers, "containers")
	check(pod.Spec.InitContainers, old.Spec.InitContainers, "initContainers")
	return allErrs
}

// validatePodLevelResourcesResize: pod-level requests and limits are
// neither removed nor changed but for cpu and memory; munged.Resources
// gets old's cpu and memory back.
func validatePodLevelResourcesResize(pod, old *corev1.Pod, munged *corev1.PodSpec) field.ErrorList {
	p := specPath.Child("resources")
	if old.Spec.Resources != nil && pod.Spec.Resources == nil {
		return field.ErrorList{field.Forbidden(p, "pod-level resources cannot be removed")}
	}
	var allErrs field.ErrorList
	if old.Spec.Resources != nil {
		if resourcesRemoved(pod.Spec.Resources.Requests, old.Spec.Resources.Requests) {
			allErrs = append(allErrs, field.Forbidden(p.Child("requests"), "pod-level resource requests cannot be removed"))
		}
		if resourcesRemoved(pod.Spec.Resources.Limits, old.Spec.Resources.Limits) {
			allErrs = append(allErrs, field.Forbidden(p.Child("limits"), "pod-level resource limits cannot be removed"))
		}
	}
	if munged.Resources != nil {
		var oldReq, oldLim corev1.ResourceList
		if old.Spec.Resources != nil {
			oldReq, oldLim = old.Spec.Resources.Requests, old.Spec.Resources.Limits
		}
		munged.Resources.Requests = restoreCPUMemory(munged.Resources.Requests, oldReq)
		munged.Resources.Limits = restoreCPUMemory(munged.Resources.Limits, oldLim)
		if old.Spec.Resources == nil && len(munged.Resources.Requests) == 0 && len(munged.Resources.Limits) == 0 && len(munged.Resources.Claims) == 0 {
			munged.Resources = nil
		}
	}
	if !equality.Semantic.DeepEqual(munged.Resources, old.Spec.Resources) {
		allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable at pod-level"))
	}
	return allErrs
}

func resourcesRemoved(list, oldList corev1.ResourceList) bool {
	if len(oldList) > len(list) {
		return true
	}
	for n := range oldList {
		if _, ok := list[n]; !ok {
			return true
		}
	}
	return false
}

// restoreCPUMemory is list with old's cpu and memory in place of its own
// (nil if both are nil).
func restoreCPUMemory(list, oldList corev1.ResourceList) corev1.ResourceList {
	if list == nil && oldList == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for n, q := range list {
		out[n] = q
	}
	delete(out, corev1.ResourceCPU)
	delete(out, corev1.ResourceMemory)
	if q, ok := oldList[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU] = q
	}
	if q, ok := oldList[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory] = q
	}
	return out
}

// resizeSupported: a pod whose running containers report no resources
// runs on a node that cannot resize.
func resizeSupported(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func validateContainerResize(c, old *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if resourcesRemoved(c.Resources.Requests, old.Resources.Requests) {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(c.Resources.Limits, old.Resources.Limits) {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("limits"), "resource limits cannot be removed"))
	}
	return allErrs
}

// dropCPUMemory puts old's cpu and memory back into c's resources.
func dropCPUMemory(c, old *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   restoreCPUMemory(c.Resources.Limits, old.Resources.Limits),
		Requests: restoreCPUMemory(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}

// ValidatePodBinding checks a binding: the target is a Node (or
// unnamed kind) with a name.
func ValidatePodBinding(b *corev1.Binding) field.ErrorList {
	var allErrs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("target", "name"), ""))
	}
	return allErrs
}
