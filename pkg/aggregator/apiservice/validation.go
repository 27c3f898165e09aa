package apiservice

import (
	"fmt"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Validate validates an APIService as kube-aggregator does on create:
// metadata (the name must be a path segment and exactly
// "<spec.version>.<spec.group>") and [ValidateFields].
func Validate(svc *apiregistrationv1.APIService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&svc.ObjectMeta, false, nameValidator(svc), field.NewPath("metadata"))
	return append(allErrs, validateSpec(svc)...)
}

// ValidateUpdate validates an update: metadata update rules and
// [Validate] of the new object.
func ValidateUpdate(svc, old *apiregistrationv1.APIService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, Validate(svc)...)
}

// ValidateFields is [Validate] without the generic metadata rules, which
// the store checks itself (with a path-segment name validator): the name
// must still match spec, then the spec rules.
func ValidateFields(svc *apiregistrationv1.APIService) field.ErrorList {
	var allErrs field.ErrorList
	if len(path.IsValidPathSegmentName(svc.Name)) == 0 {
		if want := requiredName(svc); svc.Name != want {
			allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), svc.Name, nameMismatch(want)))
		}
	}
	return append(allErrs, validateSpec(svc)...)
}

// ValidateStatus validates the status: every condition's status is True,
// False or Unknown.
func ValidateStatus(status *apiregistrationv1.APIServiceStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range status.Conditions {
		switch c.Status {
		case apiregistrationv1.ConditionTrue, apiregistrationv1.ConditionFalse, apiregistrationv1.ConditionUnknown:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("conditions").Index(i).Child("status"), c.Status, []string{
				string(apiregistrationv1.ConditionTrue), string(apiregistrationv1.ConditionFalse), string(apiregistrationv1.ConditionUnknown)}))
		}
	}
	return allErrs
}

// ValidateStatusUpdate validates a /status update: metadata update rules
// and [ValidateStatus].
func ValidateStatusUpdate(svc, old *apiregistrationv1.APIService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateStatus(&svc.Status, field.NewPath("status"))...)
}

func requiredName(svc *apiregistrationv1.APIService) string {
	return svc.Spec.Version + "." + svc.Spec.Group
}

func nameMismatch(want string) string {
	return fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", want)
}

// nameValidator is upstream's name rule: a path segment, then exactly
// "<version>.<group>".
func nameValidator(svc *apiregistrationv1.APIService) apimachineryvalidation.ValidateNameFunc {
	want := requiredName(svc)
	return func(name string, _ bool) []string {
		if msgs := path.IsValidPathSegmentName(name); len(msgs) > 0 {
			return msgs
		}
		if name != want {
			return []string{nameMismatch(want)}
		}
		return nil
	}
}

func validateSpec(svc *apiregistrationv1.APIService) field.ErrorList {
	var allErrs field.ErrorList
	spec := &svc.Spec
	specPath := field.NewPath("spec")
	// Only the legacy group's v1 may have an empty group.
	if len(spec.Group) == 0 && spec.Version != "v1" {
		allErrs = append(allErrs, field.Required(specPath.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if len(spec.Group) > 0 {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.Group) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("group"), spec.Group, msg))
		}
	}
	for _, msg := range utilvalidation.IsDNS1035Label(spec.Version) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("version"), spec.Version, msg))
	}
	if spec.GroupPriorityMinimum <= 0 || spec.GroupPriorityMinimum > 20000 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("groupPriorityMinimum"), spec.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if spec.VersionPriority <= 0 || spec.VersionPriority > 1000 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("versionPriority"), spec.VersionPriority, "must be positive and less than 1000"))
	}

	if spec.Service == nil {
		if len(spec.CABundle) != 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("caBundle"), fmt.Sprintf("%d bytes", len(spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if spec.InsecureSkipTLSVerify {
			allErrs = append(allErrs, field.Invalid(specPath.Child("insecureSkipTLSVerify"), spec.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return allErrs
	}

	svcPath := specPath.Child("service")
	if len(spec.Service.Namespace) == 0 {
		allErrs = append(allErrs, field.Required(svcPath.Child("namespace"), ""))
	}
	if len(spec.Service.Name) == 0 {
		allErrs = append(allErrs, field.Required(svcPath.Child("name"), ""))
	}
	// The port is defaulted to 443 on decode; an absent one (an object
	// built in-process) counts as 0, which is not a valid port.
	var port int32
	if spec.Service.Port != nil {
		port = *spec.Service.Port
	}
	if msgs := utilvalidation.IsValidPortNum(int(port)); msgs != nil {
		allErrs = append(allErrs, field.Invalid(svcPath.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if spec.InsecureSkipTLSVerify && len(spec.CABundle) > 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("insecureSkipTLSVerify"), spec.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return allErrs
}
