package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateRBACName is the name rule of RBAC objects: a path segment.
func ValidateRBACName(name string, prefix bool) []string {
	return path.IsValidPathSegmentName(name)
}

// ValidatePolicyRule validates one rule; namespaced rules may not name
// non-resource URLs.
func ValidatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Verbs) == 0 {
		// Upstream's +k8s:required (beta) on PolicyRule.verbs answers this
		// one, in its words, after the handwritten errors.
		errs = append(errs, field.Required(fldPath.Child("verbs"), "").MarkCoveredByDeclarative().MarkBeta())
	}
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

// ValidateRole validates a Role (metadata is the store's).
func ValidateRole(r *rbacv1.Role) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range r.Rules {
		errs = append(errs, ValidatePolicyRule(rule, true, field.NewPath("rules").Index(i))...)
	}
	return errs
}

// ValidateClusterRole validates a ClusterRole.
func ValidateClusterRole(r *rbacv1.ClusterRole) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range r.Rules {
		errs = append(errs, ValidatePolicyRule(rule, false, field.NewPath("rules").Index(i))...)
	}
	if r.AggregationRule != nil {
		fld := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(r.AggregationRule.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(fld, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range r.AggregationRule.ClusterRoleSelectors {
			errs = append(errs, metav1validation.ValidateLabelSelector(&r.AggregationRule.ClusterRoleSelectors[i],
				metav1validation.LabelSelectorValidationOptions{}, fld.Index(i))...)
		}
	}
	return errs
}

func validateRoleRef(ref rbacv1.RoleRef, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	fld := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(fld.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	switch {
	case ref.Kind == "ClusterRole", namespaced && ref.Kind == "Role":
	default:
		errs = append(errs, field.NotSupported(fld.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		// +k8s:required (beta) on RoleRef.name.
		errs = append(errs, field.Required(fld.Child("name"), "").MarkCoveredByDeclarative().MarkBeta())
	} else {
		for _, msg := range ValidateRBACName(ref.Name, false) {
			errs = append(errs, field.Invalid(fld.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

// ValidateSubject validates one subject of a binding (namespaced: of a
// RoleBinding, whose service accounts default to its namespace).
func ValidateSubject(s rbacv1.Subject, namespaced bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		// +k8s:required (beta) on Subject.name.
		errs = append(errs, field.Required(fldPath.Child("name"), "").MarkCoveredByDeclarative().MarkBeta())
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apimachineryvalidation.ValidateServiceAccountName(s.Name, false) {
				errs = append(errs, field.Invalid(fldPath.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

// ValidateRoleBinding validates a RoleBinding.
func ValidateRoleBinding(b *rbacv1.RoleBinding) field.ErrorList {
	errs := validateRoleRef(b.RoleRef, true)
	for i, s := range b.Subjects {
		errs = append(errs, ValidateSubject(s, true, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// ValidateClusterRoleBinding validates a ClusterRoleBinding.
func ValidateClusterRoleBinding(b *rbacv1.ClusterRoleBinding) field.ErrorList {
	errs := validateRoleRef(b.RoleRef, false)
	for i, s := range b.Subjects {
		errs = append(errs, ValidateSubject(s, false, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// ValidateRoleRefUpdate: roleRef never changes. v1.37.2 checks it with
// ValidateImmutableField (kube-apiserver answers roleRef: Invalid value:
// {"APIGroup":...,"Kind":...,"Name":...}: field is immutable).
func ValidateRoleRefUpdate(newRef, oldRef rbacv1.RoleRef) field.ErrorList {
	if newRef != oldRef {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), newRef, "field is immutable")}
	}
	return nil
}
