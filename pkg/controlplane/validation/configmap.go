package validation

import (
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateConfigMapName checks a configmap name: a DNS-1123 subdomain.
var ValidateConfigMapName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateConfigMap checks a new configmap: metadata and
// [ValidateConfigMapFields].
func ValidateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	allErrs := ValidateObjectMeta(&cm.ObjectMeta, true, ValidateConfigMapName, metadataPath)
	return append(allErrs, validateConfigMapData(cm)...)
}

// ValidateConfigMapFields checks a configmap but for the generic metadata
// rules: keys of data and binaryData are configmap keys, a key is in only
// one of them, and the values total at most corev1.MaxSecretSize bytes.
func ValidateConfigMapFields(cm *corev1.ConfigMap) field.ErrorList {
	allErrs := ValidateKubeFinalizerNames(cm.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateConfigMapData(cm)...)
}

func validateConfigMapData(cm *corev1.ConfigMap) field.ErrorList {
	var allErrs field.ErrorList
	dataPath, binaryPath := field.NewPath("data"), field.NewPath("binaryData")
	total := 0
	for _, key := range sortedKeys(cm.Data) {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(cm.Data[key])
	}
	for _, key := range sortedKeys(cm.BinaryData) {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(binaryPath.Key(key), key, msg))
		}
		total += len(cm.BinaryData[key])
	}
	if total > corev1.MaxSecretSize {
		// As upstream: the empty path (rendered "[]") means the whole object.
		allErrs = append(allErrs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return allErrs
}

// ValidateConfigMapUpdate checks an update: metadata update rules and
// [ValidateConfigMapUpdateFields].
func ValidateConfigMapUpdate(newCM, oldCM *corev1.ConfigMap) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&newCM.ObjectMeta, &oldCM.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateConfigMapImmutable(newCM, oldCM)...)
	return append(allErrs, ValidateConfigMap(newCM)...)
}

// ValidateConfigMapUpdateFields checks an update but for the generic
// metadata rules: once immutable is true, immutable, data and binaryData
// cannot change; the new object must be valid.
func ValidateConfigMapUpdateFields(newCM, oldCM *corev1.ConfigMap) field.ErrorList {
	allErrs := validateConfigMapImmutable(newCM, oldCM)
	return append(allErrs, ValidateConfigMapFields(newCM)...)
}

func validateConfigMapImmutable(newCM, oldCM *corev1.ConfigMap) field.ErrorList {
	if oldCM.Immutable == nil || !*oldCM.Immutable {
		return nil
	}
	var allErrs field.ErrorList
	if newCM.Immutable == nil || !*newCM.Immutable {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), fieldImmutableWhenImmutableMsg))
	}
	if !reflect.DeepEqual(newCM.Data, oldCM.Data) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), fieldImmutableWhenImmutableMsg))
	}
	if !reflect.DeepEqual(newCM.BinaryData, oldCM.BinaryData) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("binaryData"), fieldImmutableWhenImmutableMsg))
	}
	return allErrs
}

// sortedKeys returns m's keys in order, so that errors come in a stable
// order (upstream's follow map iteration).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
