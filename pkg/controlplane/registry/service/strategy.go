package service

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// strategy is the main resource's behaviour: namespaced, created by PUT
// too, unconditional updates allowed, status kept from the stored object
// (cleared on create).
type strategy struct{}

// Strategy is the create and update strategy of services.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate applies the defaults and clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	svc := obj.(*corev1.Service)
	svc.Status = corev1.ServiceStatus{}
	SetDefaults(svc)
	normalizeClusterIPs(svc, nil)
}

// PrepareForUpdate keeps the stored status, applies the defaults and drops
// the fields the new type does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	svc.Status = *oldSvc.Status.DeepCopy()
	SetDefaults(svc)
	dropTypeDependentFields(svc, oldSvc)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateServiceFields(obj.(*corev1.Service))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	errs := validation.ValidateServiceUpdateFields(svc, oldSvc)
	return append(errs, validation.ValidateServiceFieldsOnUpdate(svc, oldSvc)...)
}

// WarningsOnCreate warns as kube: IPs and CIDRs written in a
// non-canonical form (e.g. with leading zeros), and fields the type
// ignores (externalIPs of an ExternalName, externalName of other types).
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

func serviceWarnings(svc *corev1.Service) []string {
	var out []string
	spec := field.NewPath("spec")
	for i, ip := range svc.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone && ip != "" {
			out = append(out, utilvalidation.GetWarningsForIP(spec.Child("clusterIPs").Index(i), ip)...)
		}
	}
	for i, ip := range svc.Spec.ExternalIPs {
		out = append(out, utilvalidation.GetWarningsForIP(spec.Child("externalIPs").Index(i), ip)...)
	}
	if svc.Spec.LoadBalancerIP != "" {
		out = append(out, utilvalidation.GetWarningsForIP(spec.Child("loadBalancerIP"), svc.Spec.LoadBalancerIP)...)
	}
	for i, cidr := range svc.Spec.LoadBalancerSourceRanges {
		out = append(out, utilvalidation.GetWarningsForCIDR(spec.Child("loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && len(svc.Spec.ExternalIPs) > 0 {
		out = append(out, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "" {
		out = append(out, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	return out
}

// Canonicalize drops the internalTrafficPolicy of an ExternalName
// Service (once valid). kube-apiserver v1.37.2 stores it (a ClusterIP
// Service changed to ExternalName keeps its defaulted "Cluster") but drops
// it from every read, the answer of the write included (its REST's
// defaultOnReadInternalTrafficPolicy, the store's Decorator): not storing
// it gives clients the same objects.
func (strategy) Canonicalize(obj runtime.Object) {
	if svc, ok := obj.(*corev1.Service); ok && svc.Spec.Type == corev1.ServiceTypeExternalName {
		svc.Spec.InternalTrafficPolicy = nil
	}
}

func (strategy) AllowCreateOnUpdate() bool      { return true }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is services/status's: only the status changes (the
// generic status split), a LoadBalancer ingress IP's ipMode defaults to
// VIP, and the status is validated as kube's ValidateServiceStatusUpdate.
type statusStrategy struct{ generic.StatusStrategy }

// StatusStrategy is the update strategy of services/status.
var StatusStrategy = statusStrategy{generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return validation.ValidateServiceStatusFields(obj.(*corev1.Service), old.(*corev1.Service))
	},
	GroupVersions: groupVersions,
}}

// PrepareForUpdate keeps everything but the status and applies the
// defaults (ingress ipMode).
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
	SetDefaults(obj.(*corev1.Service))
}

// FieldLabels are the fields services can be selected by, besides
// metadata.name and metadata.namespace.
var FieldLabels = []string{"spec.clusterIP", "spec.type"}

// FieldLabelConversion accepts the field selector labels of core/v1
// services, for the scheme's AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion("metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type")

// AddFieldLabelConversions registers [FieldLabelConversion] for core/v1
// Service on s.
func AddFieldLabelConversions(s *runtime.Scheme) error {
	return s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Service"), FieldLabelConversion)
}

// GetAttrs returns a service's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, nil, fmt.Errorf("not a service: %T", obj)
	}
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	fs["spec.clusterIP"] = svc.Spec.ClusterIP
	fs["spec.type"] = string(svc.Spec.Type)
	return ls, fs, nil
}
