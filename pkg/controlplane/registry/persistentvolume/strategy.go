package persistentvolume

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// now is the clock of phase transitions (a var for tests).
var now = metav1.Now

// strategy is the main resource's behaviour (upstream's
// persistentvolumeStrategy): cluster-scoped, no create-on-update,
// unconditional updates allowed, status reset on create and kept on
// update.
type strategy struct{}

// Strategy is the create and update strategy of persistentvolumes.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate resets the status to phase Pending, transitioned now
// (PersistentVolumeLastPhaseTransitionTime is GA).
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	t := now()
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &t}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.PersistentVolume).Status = *old.(*corev1.PersistentVolume).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidatePersistentVolumeFields(obj.(*corev1.PersistentVolume), nil)
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pv, oldPV := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	return core.ValidatePersistentVolumeUpdateFields(pv, oldPV)
}

// WarningsOnCreate returns upstream's warnings for a volume (deprecated
// annotations, reclaim policy and sources, node affinity labels).
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return core.PersistentVolumeWarnings(obj.(*corev1.PersistentVolume))
}

// WarningsOnUpdate returns the warnings of the updated volume.
func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return core.PersistentVolumeWarnings(obj.(*corev1.PersistentVolume))
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is persistentvolumes/status's (upstream's
// persistentvolumeStatusStrategy): the stored spec is kept and a phase
// change records its time unless the writer set another one.
type statusStrategy struct{ generic.StatusStrategy }

// StatusStrategy is the update strategy of persistentvolumes/status.
var StatusStrategy = statusStrategy{generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return core.ValidatePersistentVolumeStatusUpdateFields(obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume))
	},
	GroupVersions: groupVersions,
}}

// PrepareForUpdate keeps everything but the status and maintains
// status.lastPhaseTransitionTime: kept while the phase does not change and
// the writer leaves it out, set to now when the phase changes and the
// writer neither sets nor changes it.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
	pv, oldPV := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	newT, oldT := pv.Status.LastPhaseTransitionTime, oldPV.Status.LastPhaseTransitionTime
	switch {
	case pv.Status.Phase == oldPV.Status.Phase && newT == nil:
		pv.Status.LastPhaseTransitionTime = oldT.DeepCopy()
	case pv.Status.Phase != oldPV.Status.Phase && (newT == nil || newT.Equal(oldT)):
		t := now()
		pv.Status.LastPhaseTransitionTime = &t
	}
}
