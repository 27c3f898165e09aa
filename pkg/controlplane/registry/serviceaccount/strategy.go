package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// EnforceMountableSecretsAnnotation is the deprecated annotation that
// limits the secrets pods of a service account may mount.
const EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"

// strategy is serviceaccounts' behaviour: namespaced, no create-on-update,
// unconditional updates allowed.
type strategy struct{}

// Strategy is the create and update strategy of serviceaccounts.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate keeps only the names of secret references.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

// PrepareForUpdate keeps only the names of secret references.
func (strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

// cleanSecretReferences reduces each secret reference to its name (a
// service account's secrets are always in its own namespace).
func cleanSecretReferences(sa *corev1.ServiceAccount) {
	for i, s := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: s.Name}
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateServiceAccountFields(obj.(*corev1.ServiceAccount))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateServiceAccountUpdateFields(obj.(*corev1.ServiceAccount), old.(*corev1.ServiceAccount))
}

// WarningsOnCreate warns about the deprecated enforce-mountable-secrets
// annotation, as kube does.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*corev1.ServiceAccount))
}

// WarningsOnUpdate is WarningsOnCreate for the new object.
func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*corev1.ServiceAccount))
}

func warnings(sa *corev1.ServiceAccount) []string {
	if _, ok := sa.Annotations[EnforceMountableSecretsAnnotation]; ok {
		return []string{"metadata.annotations[" + EnforceMountableSecretsAnnotation +
			"]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"}
	}
	return nil
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
