package volumeattachment

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

// strategy is the behaviour of volumeattachments: cluster-scoped, status kept by the main resource, updates without a resourceVersion refused.
type strategy struct{}

// Strategy is the create and update strategy of volumeattachments.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate clears the status: it is written through /status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*storagev1.VolumeAttachment).Status = storagev1.VolumeAttachmentStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*storagev1.VolumeAttachment).Status = *old.(*storagev1.VolumeAttachment).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return storagevalidation.ValidateVolumeAttachmentFields(obj.(*storagev1.VolumeAttachment))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return storagevalidation.ValidateVolumeAttachmentUpdateFields(obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment))
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

// StatusStrategy is the update strategy of volumeattachments/status: only the
// status changes.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return storagevalidation.ValidateVolumeAttachmentUpdateFields(obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment))
	},
	GroupVersions: groupVersions,
}
