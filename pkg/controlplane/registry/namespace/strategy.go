package namespace

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// strategy is the main resource's behaviour: cluster-scoped, no
// create-on-update, unconditional updates allowed, status and
// spec.finalizers kept from the stored object.
type strategy struct{}

// Strategy is the create and update strategy of namespaces.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate sets the phase Active and adds the "kubernetes"
// finalizer to spec.finalizers if it is missing.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
}

// PrepareForUpdate keeps the stored spec.finalizers and status: they
// change through /finalize and /status only.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNs := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = slices.Clone(oldNs.Spec.Finalizers)
	ns.Status = *oldNs.Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateNamespaceFields(obj.(*corev1.Namespace))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNamespaceUpdateFields(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// Canonicalize sets the label kubernetes.io/metadata.name to the name (a
// generated name is only known here).
func (strategy) Canonicalize(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status or spec.finalizers.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"}, []string{"spec", "finalizers"})
}

// statusStrategy is the /status subresource's: only the status changes.
type statusStrategy struct{ strategy }

// StatusStrategy is the update strategy of namespaces/status.
var StatusStrategy = statusStrategy{Strategy}

// PrepareForUpdate keeps the stored spec and defaults an empty phase to
// Active (as decoding does in kube).
func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNs := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec = *oldNs.Spec.DeepCopy()
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNamespaceStatusUpdateFields(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// GetResetFields: server-side apply to /status does not own spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"})
}

// finalizeStrategy is the /finalize subresource's: spec.finalizers
// changes, the status does not.
type finalizeStrategy struct{ strategy }

// FinalizeStrategy is the update strategy of namespaces/finalize.
var FinalizeStrategy = finalizeStrategy{Strategy}

// PrepareForUpdate keeps the stored status.
func (finalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Namespace).Status = *old.(*corev1.Namespace).Status.DeepCopy()
}

func (finalizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNamespaceFinalizeUpdateFields(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// GetResetFields: server-side apply to /finalize does not own status.
func (finalizeStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// FieldLabels are the fields namespaces can be selected by, besides
// metadata.name.
var FieldLabels = []string{"status.phase"}

// FieldLabelConversion accepts the field selector labels of core/v1
// namespaces, for the scheme's AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion("status.phase", "metadata.name")

// GetAttrs returns a namespace's labels and selectable fields
// (metadata.name, status.phase, and "name", which kube keeps for
// compatibility).
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, nil, errNotNamespace(obj)
	}
	return labels.Set(ns.Labels), fields.Set{
		"metadata.name": ns.Name,
		"status.phase":  string(ns.Status.Phase),
		"name":          ns.Name,
	}, nil
}

// AddFieldLabelConversions registers [FieldLabelConversion] for core/v1
// Namespace on s (the scheme the REST handlers convert field selectors
// with).
func AddFieldLabelConversions(s *runtime.Scheme) error {
	return s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Namespace"), FieldLabelConversion)
}
