package core

import (
	"encoding/json"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metavalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// Validation of core/v1 nodes, as upstream's ValidateNode and
// ValidateNodeUpdate (kubernetes pkg/apis/core/validation, v1.37).

// ValidateNodeName checks a node's name: a DNS subdomain.
var ValidateNodeName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateNode checks a new node: metadata and [ValidateNodeFields].
func ValidateNode(node *corev1.Node) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMeta(&node.ObjectMeta, false, ValidateNodeName, field.NewPath("metadata"))
	return append(allErrs, validateNode(node)...)
}

// ValidateNodeFields checks a node but for the generic metadata rules:
// the taint and preferAvoidPods annotations, spec.taints (upstream reports
// them under metadata.taints), the quantities of status.capacity and
// status.allocatable, and spec.podCIDRs (valid CIDRs, at most one per IP
// family, no duplicates).
func ValidateNodeFields(node *corev1.Node) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(node.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateNode(node)...)
}

func validateNode(node *corev1.Node) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := validateNodeSpecificAnnotations(node.Annotations, metaPath.Child("annotations"))
	if len(node.Spec.Taints) > 0 {
		// Upstream's path, sic.
		allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, metaPath.Child("taints"))...)
	}
	allErrs = append(allErrs, validateNodeResources(node)...)
	if cidrs := node.Spec.PodCIDRs; len(cidrs) > 0 {
		cidrsPath := field.NewPath("spec", "podCIDRs")
		var families []bool // is IPv6, per valid CIDR
		for i, c := range cidrs {
			errs := validation.IsValidCIDR(cidrsPath.Index(i), c)
			allErrs = append(allErrs, errs...)
			if len(errs) == 0 {
				p, err := netip.ParsePrefix(c)
				if err == nil {
					families = append(families, p.Addr().Unmap().Is6())
				}
			}
		}
		if len(cidrs) > 1 {
			dualStack := len(families) == 2 && families[0] != families[1]
			if !dualStack || len(cidrs) > 2 {
				allErrs = append(allErrs, field.Invalid(cidrsPath, cidrs, "may specify no more than one CIDR for each IP family"))
			}
			seen := map[string]bool{}
			for i, c := range cidrs {
				if seen[c] {
					allErrs = append(allErrs, field.Duplicate(cidrsPath.Index(i), c))
				}
				seen[c] = true
			}
		}
	}
	return allErrs
}

// ValidateNodeUpdate checks an update of a node (main resource or
// status): metadata and [ValidateNodeUpdateFields].
func ValidateNodeUpdate(node, old *corev1.Node) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMetaUpdate(&node.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateNodeUpdate(node, old)...)
}

// ValidateNodeUpdateFields checks an update of a node but for the generic
// metadata rules: annotations, quantities, no duplicate status address,
// spec.podCIDRs and spec.providerID set once, spec.externalID immutable,
// the deprecated configSource and config fields well formed, taints.
func ValidateNodeUpdateFields(node, old *corev1.Node) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(node.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateNodeUpdate(node, old)...)
}

// ValidateNodeSpecUpdateFields checks an update of a node through the main
// resource but for the generic metadata rules: the new node as
// [ValidateNodeFields] and the update rules of [ValidateNodeUpdateFields]
// (upstream checks the annotations, quantities and taints twice,
// reporting their errors twice; kapi once).
func ValidateNodeSpecUpdateFields(node, old *corev1.Node) field.ErrorList {
	allErrs := ValidateNodeFields(node)
	return append(allErrs, validateNodeUpdateRules(node, old)...)
}

func validateNodeUpdate(node, old *corev1.Node) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := validateNodeSpecificAnnotations(node.Annotations, metaPath.Child("annotations"))
	allErrs = append(allErrs, validateNodeResources(node)...)
	allErrs = append(allErrs, validateNodeUpdateRules(node, old)...)
	if len(node.Spec.Taints) > 0 {
		allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, metaPath.Child("taints"))...)
	}
	return allErrs
}

// validateNodeUpdateRules are the rules only updates have.
func validateNodeUpdateRules(node, old *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range node.Status.Addresses {
		if seen[a] {
			allErrs = append(allErrs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen[a] = true
	}
	// A controller may assign pod CIDRs once.
	if len(old.Spec.PodCIDRs) > 0 {
		msg := `node updates may not change podCIDR except from "" to valid`
		if len(old.Spec.PodCIDRs) != len(node.Spec.PodCIDRs) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), msg))
		} else {
			for i, c := range old.Spec.PodCIDRs {
				if c != node.Spec.PodCIDRs[i] {
					allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), msg))
				}
			}
		}
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != node.Spec.ProviderID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "providerID"), `node updates may not change providerID except from "" to valid`))
	}
	if node.Spec.ConfigSource != nil {
		allErrs = append(allErrs, validateNodeConfigSource(node.Spec.ConfigSource, true, field.NewPath("spec", "configSource"))...)
	}
	if c := node.Status.Config; c != nil {
		p := field.NewPath("status", "config")
		for _, s := range []struct {
			name   string
			source *corev1.NodeConfigSource
		}{{"assigned", c.Assigned}, {"active", c.Active}, {"lastKnownGood", c.LastKnownGood}} {
			if s.source != nil {
				allErrs = append(allErrs, validateNodeConfigSource(s.source, false, p.Child(s.name))...)
			}
		}
	}
	if node.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return allErrs
}

// validateNodeResources checks the quantities of a node's capacity and
// allocatable resources.
func validateNodeResources(node *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedNames(node.Status.Capacity) {
		allErrs = append(allErrs, ValidateResourceQuantityValue(name, node.Status.Capacity[name], field.NewPath("status", "capacity", string(name)))...)
	}
	for _, name := range sortedNames(node.Status.Allocatable) {
		allErrs = append(allErrs, ValidateResourceQuantityValue(name, node.Status.Allocatable[name], field.NewPath("status", "allocatable", string(name)))...)
	}
	return allErrs
}

// validateNodeSpecificAnnotations checks the JSON of the taints and
// preferAvoidPods annotations.
func validateNodeSpecificAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if v := annotations[corev1.TaintsAnnotationKey]; v != "" {
		var taints []corev1.Taint
		if err := json.Unmarshal([]byte(v), &taints); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, corev1.TaintsAnnotationKey, err.Error()))
		} else if len(taints) > 0 {
			allErrs = append(allErrs, validateNodeTaints(taints, fldPath.Child(corev1.TaintsAnnotationKey))...)
		}
	}
	if v := annotations[corev1.PreferAvoidPodsAnnotationKey]; v != "" {
		allErrs = append(allErrs, validateAvoidPods(v, fldPath)...)
	}
	return allErrs
}

// validateAvoidPods checks the preferAvoidPods annotation: valid JSON, and
// each entry names its pods by a controller reference (upstream's
// ValidateAvoidPodsInNodeAnnotations; a reference without "controller"
// counts as one that is not a controller, where upstream would panic).
func validateAvoidPods(value string, fldPath *field.Path) field.ErrorList {
	var avoid corev1.AvoidPods
	if err := json.Unmarshal([]byte(value), &avoid); err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("AvoidPods"), corev1.PreferAvoidPodsAnnotationKey, err.Error())}
	}
	var allErrs field.ErrorList
	for i, e := range avoid.PreferAvoidPods {
		idx := fldPath.Child(corev1.PreferAvoidPodsAnnotationKey).Index(i)
		ref := e.PodSignature.PodController
		switch {
		case ref == nil:
			allErrs = append(allErrs, field.Required(idx.Child("PodSignature"), ""))
		case ref.Controller == nil || !*ref.Controller:
			allErrs = append(allErrs, field.Invalid(idx.Child("PodSignature").Child("PodController").Child("Controller"),
				ref.Controller != nil && *ref.Controller, "must point to a controller"))
		}
	}
	return allErrs
}

// validateNodeTaints checks taints: label-key keys, label-value values,
// a known effect, unique by key and effect.
func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	unique := map[corev1.TaintEffect]map[string]bool{}
	for i, t := range taints {
		idx := fldPath.Index(i)
		allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
			allErrs = append(allErrs, field.Invalid(idx.Child("value"), t.Value, strings.Join(errs, ";")))
		}
		allErrs = append(allErrs, taintEffectErrors(t.Effect, idx.Child("effect"))...)
		if unique[t.Effect][t.Key] {
			dup := field.Duplicate(idx, t)
			dup.Detail = "taints must be unique by key and effect pair"
			allErrs = append(allErrs, dup)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = map[string]bool{}
		}
		unique[t.Effect][t.Key] = true
	}
	return allErrs
}

// taintEffects are the effects a node taint may have.
var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// taintEffectErrors: an effect is required and must be one of
// [taintEffects] (upstream's validateTaintEffect for nodes).
func taintEffectErrors(effect corev1.TaintEffect, fldPath *field.Path) field.ErrorList {
	switch effect {
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	default:
		return field.ErrorList{field.NotSupported(fldPath, effect, taintEffects)}
	}
}

// validateNodeConfigSource checks a node config source of the removed
// dynamic kubelet configuration, still validated for compatibility:
// exactly one reference, and a configmap reference with a namespace, a
// name and a key; uid and resourceVersion must not be set in the spec and
// must be in the status.
func validateNodeConfigSource(source *corev1.NodeConfigSource, spec bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	count := 0
	if cm := source.ConfigMap; cm != nil {
		count++
		p := fldPath.Child("configMap")
		if spec {
			if cm.UID != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("uid"), "uid must not be set in spec"))
			}
			if cm.ResourceVersion != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("resourceVersion"), "resourceVersion must not be set in spec"))
			}
		} else {
			if cm.UID == "" {
				allErrs = append(allErrs, field.Required(p.Child("uid"), "uid must be set in status"))
			}
			if cm.ResourceVersion == "" {
				allErrs = append(allErrs, field.Required(p.Child("resourceVersion"), "resourceVersion must be set in status"))
			}
		}
		if cm.Namespace == "" {
			allErrs = append(allErrs, field.Required(p.Child("namespace"), "namespace must be set"))
		} else {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(cm.Namespace, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("namespace"), cm.Namespace, msg))
			}
		}
		if cm.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), "name must be set"))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(cm.Name, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), cm.Name, msg))
			}
		}
		if cm.KubeletConfigKey == "" {
			allErrs = append(allErrs, field.Required(p.Child("kubeletConfigKey"), "kubeletConfigKey must be set"))
		} else {
			for _, msg := range validation.IsConfigMapKey(cm.KubeletConfigKey) {
				allErrs = append(allErrs, field.Invalid(p.Child("kubeletConfigKey"), cm.KubeletConfigKey, msg))
			}
		}
	}
	if count != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath, source, "exactly one reference subfield must be non-nil"))
	}
	return allErrs
}
