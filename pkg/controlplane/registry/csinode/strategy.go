package csinode

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	storagevalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/storage"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{storagev1.SchemeGroupVersion}

// strategy is the behaviour of csinodes: cluster-scoped, status kept by
// the main resource (written through /status since v1.37), updates
// without a resourceVersion refused.
type strategy struct{}

// Strategy is the create and update strategy of csinodes.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate clears the status: it is written through /status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*storagev1.CSINode).Status = storagev1.CSINodeStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*storagev1.CSINode).Status = *old.(*storagev1.CSINode).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return storagevalidation.ValidateCSINodeFields(obj.(*storagev1.CSINode))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return storagevalidation.ValidateCSINodeUpdateFields(obj.(*storagev1.CSINode), old.(*storagev1.CSINode))
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

// statusStrategy is the update strategy of csinodes/status: only the
// status changes, and status.storageHealth only when the stored object
// already has some. Upstream drops the field while its alpha feature gate
// CSIVolumeHealth is off (the default in v1.37.2, and kapi has no feature
// gates): dropDisabledCSINodeFields in pkg/registry/storage/csinode.
type statusStrategy struct {
	generic.StatusStrategy
}

// StatusStrategy is the update strategy of csinodes/status.
var StatusStrategy = statusStrategy{generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return storagevalidation.ValidateCSINodeStatusFields(obj.(*storagev1.CSINode))
	},
	GroupVersions: groupVersions,
}}

// PrepareForUpdate keeps all but the status, and drops
// status.storageHealth unless the stored object has some.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
	if len(old.(*storagev1.CSINode).Status.StorageHealth) == 0 {
		obj.(*storagev1.CSINode).Status.StorageHealth = nil
	}
}
