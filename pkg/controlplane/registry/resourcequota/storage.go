package resourcequota

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Resource is the resource served.
var Resource = corev1.Resource("resourcequotas")

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// NewREST returns the completed store of core/v1 resourcequotas and their
// status subresource, on the storage opts makes for them.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.ResourceQuota{} },
		NewListFunc:               func() runtime.Object { return &corev1.ResourceQuotaList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("resourcequota"),
		ResourceShortNames:        []string{"quota"},
		NameValidator:             core.ValidateResourceQuotaName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}

// strategy is the main resource's behaviour (upstream's
// resourcequotaStrategy): namespaced, no create-on-update, unconditional
// updates allowed, status cleared on create and kept on update.
type strategy struct{}

// Strategy is the create and update strategy of resourcequotas.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = *old.(*corev1.ResourceQuota).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidateResourceQuotaFields(obj.(*corev1.ResourceQuota))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	q, oldQ := obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)
	return core.ValidateResourceQuotaUpdateFields(q, oldQ)
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of resourcequotas/status
// (upstream's resourcequotaStatusStrategy): the stored spec is kept, the
// status validated as upstream's ValidateResourceQuotaStatusUpdate.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return core.ValidateResourceQuotaStatusUpdateFields(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
	},
	GroupVersions: groupVersions,
}
