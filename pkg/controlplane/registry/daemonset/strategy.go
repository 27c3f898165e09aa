package daemonset

import (
	"context"
	"strconv"

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
// the stored object, generation bumped on spec changes, template
// generation kept by the server, no create-on-update, unconditional
// updates allowed.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of daemonsets.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status and starts the template generation
// at 1 (or keeps a larger one the client gave).
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	ds.Status = appsv1.DaemonSetStatus{}
	defaultscorev1.DropDisabledTemplateFields(&ds.Spec.Template, nil)
	gen, _, err := appsvalidation.TemplateGeneration(ds)
	if err != nil {
		return // not an integer: validation reports it
	}
	setTemplateGeneration(ds, max(gen, 1))
}

// PrepareForUpdate keeps the stored status and template generation; a
// changed template moves the template generation by one.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ds, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	ds.Status = *o.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(&ds.Spec.Template, &o.Spec.Template)
	gen := storedTemplateGeneration(o)
	if !equality.Semantic.DeepEqual(ds.Spec.Template, o.Spec.Template) {
		gen++
	}
	setTemplateGeneration(ds, gen)
}

// storedTemplateGeneration is the template generation of a stored
// daemonset (0 if it has none: upstream's zero value).
func storedTemplateGeneration(ds *appsv1.DaemonSet) int64 {
	gen, _, err := appsvalidation.TemplateGeneration(ds)
	if err != nil {
		return 0
	}
	return gen
}

// setTemplateGeneration writes the template generation annotation.
func setTemplateGeneration(ds *appsv1.DaemonSet, gen int64) {
	setTemplateGenerationString(ds, strconv.FormatInt(gen, 10))
}

// setTemplateGenerationString writes the template generation annotation
// (on a copy of the annotations: they may be shared with the stored
// object).
func setTemplateGenerationString(ds *appsv1.DaemonSet, v string) {
	annotations := make(map[string]string, len(ds.Annotations)+1)
	for k, val := range ds.Annotations {
		annotations[k] = val
	}
	annotations[appsv1.DeprecatedTemplateGeneration] = v
	ds.Annotations = annotations
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ds := obj.(*appsv1.DaemonSet)
	return appsvalidation.ValidateDaemonSetFields(ds, workload.TemplateValidationOptions(&ds.Spec.Template, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ds, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	return appsvalidation.ValidateDaemonSetUpdateFields(ds, o, workload.TemplateValidationOptions(&ds.Spec.Template, &o.Spec.Template))
}

// WarningsOnCreate warns about the pod template.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return workload.TemplateWarnings(&obj.(*appsv1.DaemonSet).Spec.Template)
}

// WarningsOnUpdate warns about the pod template when the generation moved.
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	ds := obj.(*appsv1.DaemonSet)
	if ds.Generation == old.(*appsv1.DaemonSet).Generation {
		return nil
	}
	return workload.TemplateWarnings(&ds.Spec.Template)
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is the /status subresource's: the spec (template
// generation included) is kept from the stored object; the status and the
// rest of the metadata change.
type statusStrategy struct{ strategy }

// StatusStrategy is the update strategy of daemonsets/status.
var StatusStrategy = statusStrategy{Strategy}

var _ generic.UpdateStrategy = StatusStrategy

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ds, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	ds.Spec = *o.Spec.DeepCopy()
	if v, ok := o.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
		setTemplateGenerationString(ds, v)
	}
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return appsvalidation.ValidateDaemonSetStatusUpdateFields(obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet))
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields: server-side apply to /status does not own the spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"})
}
