package apiservice

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{apiregistrationv1.SchemeGroupVersion}

// strategy is the main resource's behaviour: cluster-scoped, status kept
// from the stored object (a new local APIService is Available at once),
// updates must name a resourceVersion, no create on update.
type strategy struct{}

// Strategy is the create and update strategy of apiservices.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate defaults the object (for objects built in-process; a
// decoded body is defaulted already), clears the status and marks a local
// APIService Available, as kube-aggregator does.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	svc := obj.(*apiregistrationv1.APIService)
	scheme.Scheme.Default(svc)
	svc.Status = apiregistrationv1.APIServiceStatus{}
	if IsLocal(svc) {
		SetCondition(svc, LocalAvailableCondition(metav1.Now()))
	}
}

// PrepareForUpdate defaults the object and keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	svc := obj.(*apiregistrationv1.APIService)
	scheme.Scheme.Default(svc)
	svc.Status = *old.(*apiregistrationv1.APIService).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateFields(obj.(*apiregistrationv1.APIService))
}

func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateFields(obj.(*apiregistrationv1.APIService))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is the /status subresource's: only the status changes.
type statusStrategy struct{ generic.StatusStrategy }

// StatusStrategy is the update strategy of apiservices/status.
var StatusStrategy = statusStrategy{generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return ValidateStatus(&obj.(*apiregistrationv1.APIService).Status, field.NewPath("status"))
	},
	GroupVersions: groupVersions,
}}

// GetResetFields: server-side apply to /status owns neither spec nor
// metadata, as upstream.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"}, []string{"metadata"})
}
