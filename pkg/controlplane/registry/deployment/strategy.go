package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{appsv1.SchemeGroupVersion}

// strategy is the main resource's behaviour: namespaced, status kept from
// the stored object, no create-on-update, unconditional updates allowed.
type strategy struct{}

// Strategy is the create and update strategy of deployments.
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
	o := obj.(*appsv1.Deployment)
	o.Status = appsv1.DeploymentStatus{}
	defaultscorev1.DropDisabledTemplateFields(&o.Spec.Template, nil)
}

// PrepareForUpdate keeps the stored status: only /status changes it.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	o, oldO := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	o.Status = *oldO.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(&o.Spec.Template, &oldO.Spec.Template)
}

// GenerationChanged: a change of the spec or of the annotations (which
// the deployment controller copies to replicasets) bumps the generation.
func (strategy) GenerationChanged(_ context.Context, obj, old runtime.Object) bool {
	d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	return !equality.Semantic.DeepEqual(d.Spec, o.Spec) || !equality.Semantic.DeepEqual(d.Annotations, o.Annotations)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	return appsvalidation.ValidateDeploymentFields(d, workload.TemplateValidationOptions(&d.Spec.Template, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	return appsvalidation.ValidateDeploymentUpdateFields(d, o, workload.TemplateValidationOptions(&d.Spec.Template, &o.Spec.Template))
}

// WarningsOnCreate warns about a name that is not a DNS label (it becomes
// part of pod names and hostnames) and about the pod template.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	d := obj.(*appsv1.Deployment)
	return append(workload.NameWarnings(d.Name), workload.TemplateWarnings(&d.Spec.Template)...)
}

// WarningsOnUpdate warns about the pod template when the generation moved.
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	d := obj.(*appsv1.Deployment)
	if d.Generation == old.(*appsv1.Deployment).Generation {
		return nil
	}
	return workload.TemplateWarnings(&d.Spec.Template)
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is the /status subresource's: the spec and the labels
// are kept from the stored object; the status and the rest of the
// metadata change.
type statusStrategy struct{ strategy }

// StatusStrategy is the update strategy of deployments/status.
var StatusStrategy = statusStrategy{Strategy}

var _ generic.UpdateStrategy = StatusStrategy

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	d.Spec = *o.Spec.DeepCopy()
	d.Labels = copyMap(o.Labels)
}

// GenerationChanged: a status update never bumps the generation.
func (statusStrategy) GenerationChanged(context.Context, runtime.Object, runtime.Object) bool {
	return false
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return appsvalidation.ValidateDeploymentStatusUpdateFields(obj.(*appsv1.Deployment), old.(*appsv1.Deployment))
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields: server-side apply to /status does not own the spec or
// the labels.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"}, []string{"metadata", "labels"})
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
