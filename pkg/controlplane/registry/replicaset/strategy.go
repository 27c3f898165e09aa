package replicaset

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

var groupVersions = []schema.GroupVersion{appsv1.SchemeGroupVersion}

// strategy is the main resource's behaviour: namespaced, status kept from
// the stored object, generation bumped on spec changes, no
// create-on-update, unconditional updates allowed.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of replicasets.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status: a create cannot set it.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	o := obj.(*appsv1.ReplicaSet)
	o.Status = appsv1.ReplicaSetStatus{}
	defaultscorev1.DropDisabledTemplateFields(&o.Spec.Template, nil)
}

// PrepareForUpdate keeps the stored status: only /status changes it.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	o, oldO := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	o.Status = *oldO.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(&o.Spec.Template, &oldO.Spec.Template)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	return appsvalidation.ValidateReplicaSetFields(rs, workload.TemplateValidationOptions(&rs.Spec.Template, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	rs, o := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	return appsvalidation.ValidateReplicaSetUpdateFields(rs, o, workload.TemplateValidationOptions(&rs.Spec.Template, &o.Spec.Template))
}

// WarningsOnCreate warns about a name that is not a DNS label and about
// the pod template.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	rs := obj.(*appsv1.ReplicaSet)
	return append(workload.NameWarnings(rs.Name), workload.TemplateWarnings(&rs.Spec.Template)...)
}

// WarningsOnUpdate warns about the pod template when the generation moved.
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.Generation == old.(*appsv1.ReplicaSet).Generation {
		return nil
	}
	return workload.TemplateWarnings(&rs.Spec.Template)
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is the /status subresource's: the spec is kept from the
// stored object; the status and the metadata change.
type statusStrategy struct{ strategy }

// StatusStrategy is the update strategy of replicasets/status.
var StatusStrategy = statusStrategy{Strategy}

var _ generic.UpdateStrategy = StatusStrategy

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*appsv1.ReplicaSet).Spec = *old.(*appsv1.ReplicaSet).Spec.DeepCopy()
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return appsvalidation.ValidateReplicaSetStatusUpdateFields(obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet))
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields: server-side apply to /status does not own the spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"})
}

// FieldLabels are the fields replicasets can be selected by, besides
// metadata.name and metadata.namespace.
var FieldLabels = []string{"status.replicas"}

// GetAttrs returns a replicaset's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if rs, ok := obj.(*appsv1.ReplicaSet); ok {
		fs["status.replicas"] = strconv.Itoa(int(rs.Status.Replicas))
	}
	return ls, fs, nil
}
