package replicationcontroller

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// strategy is the main resource's behaviour (upstream's rcStrategy):
// namespaced, no create-on-update, unconditional updates allowed, status
// cleared on create and kept on update, generation following the spec.
type strategy struct {
	generic.SpecGeneration
}

// Strategy is the create, update and delete strategy of
// replicationcontrollers.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy                  = Strategy
	_ generic.UpdateStrategy                  = Strategy
	_ generic.GenerationStrategy              = Strategy
	_ generic.DeleteStrategy                  = Strategy
	_ generic.GarbageCollectionDeleteStrategy = Strategy
	_ rest.ResetFieldsStrategy                = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	rc.Status = corev1.ReplicationControllerStatus{}
	defaultscorev1.DropDisabledTemplateFields(rc.Spec.Template, nil)
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	rc, oldRC := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	rc.Status = *oldRC.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(rc.Spec.Template, oldRC.Spec.Template)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidateReplicationControllerFields(obj.(*corev1.ReplicationController))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	rc, oldRC := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	return core.ValidateReplicationControllerUpdateFields(rc, oldRC)
}

// WarningsOnCreate warns, as upstream, about a name that is not a DNS
// label (pods and their hostnames are named after it) and about the pod
// template.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return core.ReplicationControllerWarnings(obj.(*corev1.ReplicationController))
}

// WarningsOnUpdate warns about the pod template when the spec changed, as
// upstream.
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	rc, oldRC := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	if rc.Generation == oldRC.Generation || rc.Spec.Template == nil {
		return nil
	}
	return core.PodSpecWarnings(&rc.Spec.Template.ObjectMeta, &rc.Spec.Template.Spec, field.NewPath("spec", "template"))
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// CheckGracefulDelete implements generic.DeleteStrategy: controllers are
// deleted at once.
func (strategy) CheckGracefulDelete(context.Context, runtime.Object, *metav1.DeleteOptions) bool {
	return false
}

// DefaultGarbageCollectionPolicy is upstream's: a delete through core/v1
// orphans the dependents unless the request sets a propagation policy
// (backwards compatibility), any other version deletes them.
func (strategy) DefaultGarbageCollectionPolicy(ctx context.Context) generic.GarbageCollectionPolicy {
	if info, ok := request.RequestInfoFrom(ctx); ok && info.APIGroup == corev1.GroupName && info.APIVersion == corev1.SchemeGroupVersion.Version {
		return generic.OrphanDependents
	}
	return generic.DeleteDependents
}

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of replicationcontrollers/status
// (upstream's rcStatusStrategy): the stored spec is kept, the status
// validated as upstream's ValidateReplicationControllerStatusUpdate.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return core.ValidateReplicationControllerStatusUpdateFields(obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController))
	},
	GroupVersions: groupVersions,
}

// FieldLabels are the fields controllers can be selected by, besides
// metadata.name and metadata.namespace.
var FieldLabels = []string{"status.replicas"}

// FieldLabelConversion accepts the field selector labels of core/v1
// replication controllers (upstream's conversion.go), for the scheme's
// AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion("metadata.name", "metadata.namespace", "status.replicas")

// GetAttrs returns a controller's labels and selectable fields
// (upstream's ControllerToSelectableFields).
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return nil, nil, fmt.Errorf("not a replication controller: %T", obj)
	}
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	fs["status.replicas"] = strconv.Itoa(int(rc.Status.Replicas))
	return ls, fs, nil
}
