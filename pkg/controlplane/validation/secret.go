package validation

import (
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSecretName checks a secret name: a DNS-1123 subdomain.
var ValidateSecretName = apimachineryvalidation.NameIsDNSSubdomain

// redactedSecret stands for secret contents in error values.
const redactedSecret = "<secret contents redacted>"

// ValidateSecret checks a new secret: metadata and
// [ValidateSecretFields].
func ValidateSecret(s *corev1.Secret) field.ErrorList {
	allErrs := ValidateObjectMeta(&s.ObjectMeta, true, ValidateSecretName, metadataPath)
	return append(allErrs, validateSecretData(s)...)
}

// ValidateSecretFields checks a secret but for the generic metadata rules:
// data keys are configmap keys, the values total at most
// corev1.MaxSecretSize bytes, and each well-known type has its required
// keys (service-account-token: the kubernetes.io/service-account.name
// annotation; dockercfg / dockerconfigjson: valid JSON under .dockercfg /
// .dockerconfigjson; basic-auth: username or password; ssh-auth:
// ssh-privatekey; tls: tls.crt and tls.key). Data from stringData must
// have been merged into data before (the strategy does it).
func ValidateSecretFields(s *corev1.Secret) field.ErrorList {
	allErrs := ValidateKubeFinalizerNames(s.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateSecretData(s)...)
}

func validateSecretData(s *corev1.Secret) field.ErrorList {
	var allErrs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for _, key := range sortedKeys(s.Data) {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, msg))
		}
		total += len(s.Data[key])
	}
	if total > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	return append(allErrs, validateSecretType(s, dataPath)...)
}

// validateSecretType checks the keys a secret's type requires. The paths
// of basic-auth and ssh-auth errors are upstream's ("data[%s][key]").
func validateSecretType(s *corev1.Secret, dataPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// Upstream reports these two types' missing keys under this odd path.
	quirkPath := field.NewPath("data[%s]")
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// Only the name annotation is required: the uid annotation and the
		// token are a controller's to add.
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			allErrs = append(allErrs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		allErrs = append(allErrs, validateJSONKey(s.Data, corev1.DockerConfigKey, dataPath)...)
	case corev1.SecretTypeDockerConfigJson:
		allErrs = append(allErrs, validateJSONKey(s.Data, corev1.DockerConfigJsonKey, dataPath)...)
	case corev1.SecretTypeBasicAuth:
		// Either may be empty, but one of them must be present.
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			allErrs = append(allErrs,
				field.Required(quirkPath.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(quirkPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			allErrs = append(allErrs, field.Required(quirkPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if _, ok := s.Data[corev1.TLSCertKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSCertKey), ""))
		}
		if _, ok := s.Data[corev1.TLSPrivateKeyKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return allErrs
}

// validateJSONKey requires data[key] to be present and a JSON object.
func validateJSONKey(data map[string][]byte, key string, dataPath *field.Path) field.ErrorList {
	raw, ok := data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(raw, &map[string]any{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), redactedSecret, err.Error())}
	}
	return nil
}

// ValidateSecretUpdate checks an update: metadata update rules and
// [ValidateSecretUpdateFields].
func ValidateSecretUpdate(newS, oldS *corev1.Secret) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&newS.ObjectMeta, &oldS.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateSecretUpdate(newS, oldS)...)
	return append(allErrs, ValidateSecret(newS)...)
}

// ValidateSecretUpdateFields checks an update but for the generic metadata
// rules: the type cannot change; once immutable is true, immutable and
// data cannot change; the new object must be valid.
func ValidateSecretUpdateFields(newS, oldS *corev1.Secret) field.ErrorList {
	allErrs := validateSecretUpdate(newS, oldS)
	return append(allErrs, ValidateSecretFields(newS)...)
}

func validateSecretUpdate(newS, oldS *corev1.Secret) field.ErrorList {
	allErrs := ValidateImmutableField(newS.Type, oldS.Type, field.NewPath("type"))
	if oldS.Immutable != nil && *oldS.Immutable {
		if newS.Immutable == nil || !*newS.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), fieldImmutableWhenImmutableMsg))
		}
		// stringData was merged into data before validation.
		if !reflect.DeepEqual(newS.Data, oldS.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), fieldImmutableWhenImmutableMsg))
		}
	}
	return allErrs
}
