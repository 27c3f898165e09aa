package generic

import (
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta"
)

// validationMeta is the metadata of an object being validated, its
// managed fields read once: apimachinery's ValidateObjectMetaAccessor and
// ValidateObjectMetaAccessorUpdate each call GetManagedFields on the new
// object, which for a custom resource (*unstructured.Unstructured)
// converts every entry by reflection, fieldsV1 through a JSON round trip.
// The validators only read the entries, and not their fieldsV1
// (unstructuredmeta.ManagedFieldsForValidation).
type validationMeta struct {
	metav1.Object
	managedFields []metav1.ManagedFieldsEntry
	read          bool
}

func (m *validationMeta) GetManagedFields() []metav1.ManagedFieldsEntry {
	if !m.read {
		m.managedFields, m.read = unstructuredmeta.ManagedFieldsForValidation(m.Object), true
	}
	return m.managedFields
}

// The paths of the metadata fields validateObjectMeta and
// validateObjectMetaUpdate report, built once: apimachinery's validators
// build each of them on every call, errors or not. An error keeps its
// path's string, not the path, so sharing them is safe.
var (
	metadataPath                    = field.NewPath("metadata")
	metadataGenerateNamePath        = metadataPath.Child("generateName")
	metadataNamePath                = metadataPath.Child("name")
	metadataNamespacePath           = metadataPath.Child("namespace")
	metadataGenerationPath          = metadataPath.Child("generation")
	metadataLabelsPath              = metadataPath.Child("labels")
	metadataAnnotationsPath         = metadataPath.Child("annotations")
	metadataOwnerReferencesPath     = metadataPath.Child("ownerReferences")
	metadataFinalizersPath          = metadataPath.Child("finalizers")
	metadataManagedFieldsPath       = metadataPath.Child("managedFields")
	metadataResourceVersionPath     = metadataPath.Child("resourceVersion")
	metadataUIDPath                 = metadataPath.Child("uid")
	metadataCreationTimestampPath   = metadataPath.Child("creationTimestamp")
	metadataDeletionTimestampPath   = metadataPath.Child("deletionTimestamp")
	metadataDeletionGracePeriodPath = metadataPath.Child("deletionGracePeriodSeconds")
)

// validateObjectMeta is validation.ValidateObjectMetaAccessor(m,
// namespaced, nameFn, field.NewPath("metadata")): the same checks, through
// the same validators, in the same order, with the paths above
// (TestValidateObjectMetaAsUpstream).
func validateObjectMeta(m metav1.Object, namespaced bool, nameFn validation.ValidateNameFunc) field.ErrorList {
	var errs field.ErrorList
	if generateName := m.GetGenerateName(); len(generateName) != 0 {
		for _, msg := range nameFn(generateName, true) {
			errs = append(errs, field.Invalid(metadataGenerateNamePath, generateName, msg))
		}
	}
	if name := m.GetName(); len(name) == 0 {
		errs = append(errs, field.Required(metadataNamePath, "name or generateName is required"))
	} else {
		for _, msg := range nameFn(name, false) {
			errs = append(errs, field.Invalid(metadataNamePath, name, msg))
		}
	}
	if namespace := m.GetNamespace(); namespaced {
		if len(namespace) == 0 {
			errs = append(errs, field.Required(metadataNamespacePath, ""))
		} else {
			for _, msg := range validation.ValidateNamespaceName(namespace, false) {
				errs = append(errs, field.Invalid(metadataNamespacePath, namespace, msg))
			}
		}
	} else if len(namespace) != 0 {
		errs = append(errs, field.Forbidden(metadataNamespacePath, "not allowed on this type"))
	}
	errs = append(errs, validation.ValidateNonnegativeField(m.GetGeneration(), metadataGenerationPath).MarkCoveredByDeclarative()...)
	errs = append(errs, v1validation.ValidateLabels(m.GetLabels(), metadataLabelsPath)...)
	errs = append(errs, validation.ValidateAnnotations(m.GetAnnotations(), metadataAnnotationsPath)...)
	errs = append(errs, validation.ValidateOwnerReferences(m.GetOwnerReferences(), metadataOwnerReferencesPath)...)
	errs = append(errs, validation.ValidateFinalizers(m.GetFinalizers(), metadataFinalizersPath)...)
	errs = append(errs, v1validation.ValidateManagedFields(m.GetManagedFields(), metadataManagedFieldsPath, v1validation.CoveredByDeclarative)...)
	return errs
}

// validateObjectMetaUpdate is validation.ValidateObjectMetaAccessorUpdate(m,
// old, field.NewPath("metadata")), as validateObjectMeta is
// ValidateObjectMetaAccessor (TestValidateObjectMetaAsUpstream). Equal
// strings skip ValidateImmutableField, which finds them equal.
func validateObjectMetaUpdate(m, old metav1.Object) field.ErrorList {
	var errs field.ErrorList
	if old.GetDeletionTimestamp() != nil {
		errs = append(errs, validation.ValidateNoNewFinalizers(m.GetFinalizers(), old.GetFinalizers(), metadataFinalizersPath)...)
	}
	if rv := m.GetResourceVersion(); len(rv) == 0 {
		errs = append(errs, field.Invalid(metadataResourceVersionPath, rv, "must be specified for an update"))
	}
	generation := m.GetGeneration()
	errs = append(errs, validation.ValidateNonnegativeField(generation, metadataGenerationPath).MarkCoveredByDeclarative()...)
	if generation < old.GetGeneration() {
		errs = append(errs, field.Invalid(metadataGenerationPath, generation, "must not be decremented"))
	}
	if n, o := m.GetName(), old.GetName(); n != o {
		errs = append(errs, validation.ValidateImmutableField(n, o, metadataNamePath)...)
	}
	if n, o := m.GetNamespace(), old.GetNamespace(); n != o {
		errs = append(errs, validation.ValidateImmutableField(n, o, metadataNamespacePath)...)
	}
	if n, o := m.GetUID(), old.GetUID(); n != o {
		errs = append(errs, validation.ValidateImmutableField(n, o, metadataUIDPath).WithOrigin("immutable").MarkCoveredByDeclarative()...)
	}
	errs = append(errs, validation.ValidateImmutableField(m.GetCreationTimestamp(), old.GetCreationTimestamp(), metadataCreationTimestampPath).WithOrigin("immutable").MarkCoveredByDeclarative()...)
	errs = append(errs, validation.ValidateImmutableField(m.GetDeletionTimestamp(), old.GetDeletionTimestamp(), metadataDeletionTimestampPath).WithOrigin("immutable").MarkCoveredByDeclarative()...)
	errs = append(errs, validation.ValidateImmutableField(m.GetDeletionGracePeriodSeconds(), old.GetDeletionGracePeriodSeconds(), metadataDeletionGracePeriodPath).WithOrigin("immutable").MarkCoveredByDeclarative()...)
	errs = append(errs, v1validation.ValidateLabels(m.GetLabels(), metadataLabelsPath)...)
	errs = append(errs, validation.ValidateAnnotations(m.GetAnnotations(), metadataAnnotationsPath)...)
	errs = append(errs, validation.ValidateOwnerReferences(m.GetOwnerReferences(), metadataOwnerReferencesPath)...)
	errs = append(errs, v1validation.ValidateManagedFields(m.GetManagedFields(), metadataManagedFieldsPath, v1validation.CoveredByDeclarative)...)
	return errs
}
