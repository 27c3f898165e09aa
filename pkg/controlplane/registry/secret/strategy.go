package secret

import (
	"context"
	"crypto/tls"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	coredefaults "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// strategy is secrets' behaviour: namespaced, no create-on-update,
// unconditional updates allowed.
type strategy struct{}

// Strategy is the create and update strategy of secrets.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate merges stringData into data and defaults the type.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	normalize(obj.(*corev1.Secret))
}

// PrepareForUpdate merges stringData into data and defaults the type, as
// decoding a request does in kube-apiserver.
func (strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	normalize(obj.(*corev1.Secret))
}

// normalize does what kube's decoding of a v1 Secret does (stringData
// merged into data, an empty type Opaque). Decoding a request already did
// it (the scheme's defaulting, before the field manager looks); this is
// for objects that reach the store otherwise.
func normalize(s *corev1.Secret) {
	coredefaults.SetObjectDefaults_Secret(s)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateSecretFields(obj.(*corev1.Secret))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateSecretUpdateFields(obj.(*corev1.Secret), old.(*corev1.Secret))
}

// WarningsOnCreate warns when a TLS secret's key does not match its
// certificate (or either does not parse), as kube does.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*corev1.Secret))
}

// WarningsOnUpdate is WarningsOnCreate for the new object.
func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*corev1.Secret))
}

func warnings(s *corev1.Secret) []string {
	if s.Type != corev1.SecretTypeTLS {
		return nil
	}
	if _, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return []string{err.Error()}
	}
	return nil
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// FieldLabels are the fields secrets can be selected by, besides
// metadata.name and metadata.namespace.
var FieldLabels = []string{"type"}

// GetAttrs returns a secret's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if s, ok := obj.(*corev1.Secret); ok {
		fs["type"] = string(s.Type)
	}
	return ls, fs, nil
}

// FieldLabelConversion converts (here: accepts) the field selector labels
// of core/v1 secrets, for the scheme's AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion("type", "metadata.namespace", "metadata.name")

// AddFieldLabelConversions registers [FieldLabelConversion] for core/v1
// Secret on s (the scheme the REST handlers convert field selectors with).
func AddFieldLabelConversions(s *runtime.Scheme) error {
	return s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Secret"), FieldLabelConversion)
}
