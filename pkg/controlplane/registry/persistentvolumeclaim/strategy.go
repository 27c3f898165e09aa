package persistentvolumeclaim

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

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// strategy is the main resource's behaviour (upstream's
// persistentvolumeclaimStrategy): namespaced, no create-on-update,
// unconditional updates allowed, status cleared on create and kept on
// update, data sources normalized.
type strategy struct{}

// Strategy is the create and update strategy of persistentvolumeclaims.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status, drops a cross-namespace
// dataSourceRef and normalizes the data sources.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	pvc.Status = corev1.PersistentVolumeClaimStatus{}
	dropCrossNamespaceDataSourceRef(&pvc.Spec, nil)
	enforceDataSourceBackwardsCompatibility(&pvc.Spec, nil)
	normalizeDataSources(&pvc.Spec)
}

// PrepareForUpdate keeps the stored status and normalizes the data
// sources of both claims (objects stored by older servers pass
// validation).
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pvc, oldPVC := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
	pvc.Status = *oldPVC.Status.DeepCopy()
	dropCrossNamespaceDataSourceRef(&pvc.Spec, &oldPVC.Spec)
	enforceDataSourceBackwardsCompatibility(&pvc.Spec, &oldPVC.Spec)
	normalizeDataSources(&pvc.Spec)
	normalizeDataSources(&oldPVC.Spec)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidatePersistentVolumeClaimFields(obj.(*corev1.PersistentVolumeClaim), nil)
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return core.ValidatePersistentVolumeClaimUpdateFields(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
}

// WarningsOnCreate returns upstream's warnings for a claim (the
// deprecated storage class annotation, selector and resource names).
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return core.PersistentVolumeClaimWarnings(obj.(*corev1.PersistentVolumeClaim))
}

// WarningsOnUpdate returns the warnings of the updated claim.
func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return core.PersistentVolumeClaimWarnings(obj.(*corev1.PersistentVolumeClaim))
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of persistentvolumeclaims/status
// (upstream's persistentvolumeclaimStatusStrategy): the stored spec is
// kept, the status validated as upstream's
// ValidatePersistentVolumeClaimStatusUpdate.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return core.ValidatePersistentVolumeClaimStatusUpdateFields(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
	},
	// As upstream's DropDisabledFieldsFromStatus with v1.37.2's default
	// gates: status.healthStatus (CSIVolumeHealth, alpha, off) is dropped
	// unless the stored claim already has one.
	PrepareStatus: func(obj, old runtime.Object) {
		if old.(*corev1.PersistentVolumeClaim).Status.HealthStatus == nil {
			obj.(*corev1.PersistentVolumeClaim).Status.HealthStatus = nil
		}
	},
	GroupVersions: groupVersions,
}

// enforceDataSourceBackwardsCompatibility keeps the legacy behaviour of
// spec.dataSource (upstream's EnforceDataSourceBackwardsCompatibility, KEP
// 1495): on a create, or an update of a claim without data source, a
// dataSource other than a PersistentVolumeClaim or a VolumeSnapshot
// (snapshot.storage.k8s.io) is silently dropped, unless dataSourceRef is
// set (a newer client, which validation answers).
func enforceDataSourceBackwardsCompatibility(spec, oldSpec *corev1.PersistentVolumeClaimSpec) {
	if oldSpec != nil && (oldSpec.DataSource != nil || oldSpec.DataSourceRef != nil) {
		return
	}
	if spec.DataSourceRef != nil || spec.DataSource == nil {
		return
	}
	ds := spec.DataSource
	group := ""
	if ds.APIGroup != nil {
		group = *ds.APIGroup
	}
	isPVC := ds.Kind == "PersistentVolumeClaim" && group == ""
	isSnapshot := ds.Kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io"
	if !isPVC && !isSnapshot {
		spec.DataSource = nil
	}
}

// dropCrossNamespaceDataSourceRef drops a dataSourceRef that names a
// namespace (CrossNamespaceVolumeDataSource, alpha, off by default in
// v1.37.2) unless the stored claim (oldSpec, nil on create) has a
// dataSourceRef, as upstream's pvcutil.DropDisabledFields. It runs before
// the backwards-compatibility rule and the normalization, so a dataSource
// sent along is then mirrored into dataSourceRef, without the namespace.
func dropCrossNamespaceDataSourceRef(spec, oldSpec *corev1.PersistentVolumeClaimSpec) {
	ref := spec.DataSourceRef
	if ref == nil || ref.Namespace == nil || *ref.Namespace == "" {
		return
	}
	if oldSpec != nil && oldSpec.DataSourceRef != nil {
		return
	}
	spec.DataSourceRef = nil
}

// normalizeDataSources makes dataSource and dataSourceRef mirror each
// other when only one is set (a dataSourceRef with a namespace has no
// dataSource counterpart), as upstream's NormalizeDataSources.
func normalizeDataSources(spec *corev1.PersistentVolumeClaimSpec) {
	switch {
	case spec.DataSource != nil && spec.DataSourceRef == nil:
		ds := spec.DataSource
		spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: copyString(ds.APIGroup), Kind: ds.Kind, Name: ds.Name}
	case spec.DataSourceRef != nil && spec.DataSource == nil:
		ref := spec.DataSourceRef
		if ref.Namespace != nil && *ref.Namespace != "" {
			return
		}
		spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: copyString(ref.APIGroup), Kind: ref.Kind, Name: ref.Name}
	}
}

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
