package podtemplate

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	validationcore "github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is podtemplates' behaviour: namespaced, no status, the
// generation bumped when the template changes.
type strategy struct{}

// Strategy is the create and update strategy of podtemplates.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate: a new template's generation is 1 (the store sets it);
// the fields of features that are off by default are dropped.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	defaultscorev1.DropDisabledTemplateFields(&obj.(*corev1.PodTemplate).Template, nil)
}

// PrepareForUpdate drops the fields of features that are off by default
// and that the stored template does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	defaultscorev1.DropDisabledTemplateFields(&obj.(*corev1.PodTemplate).Template, &old.(*corev1.PodTemplate).Template)
}

// GenerationChanged: the template changed (upstream's podTemplateStrategy
// compares the templates).
func (strategy) GenerationChanged(_ context.Context, obj, old runtime.Object) bool {
	return !equality.Semantic.DeepEqual(obj.(*corev1.PodTemplate).Template, old.(*corev1.PodTemplate).Template)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	pt := obj.(*corev1.PodTemplate)
	return validationcore.ValidatePodTemplateFields(pt, validationcore.ValidationOptionsForPodTemplate(&pt.Template, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pt, oldPT := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	return validationcore.ValidatePodTemplateUpdateFields(pt, oldPT, validationcore.ValidationOptionsForPodTemplate(&pt.Template, &oldPT.Template))
}

// WarningsOnCreate: upstream's GetWarningsForPodTemplate.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	pt := obj.(*corev1.PodTemplate)
	return validationcore.PodSpecWarnings(&pt.Template.ObjectMeta, &pt.Template.Spec, field.NewPath("template"))
}

// WarningsOnUpdate: the same, when the template changed.
func (s strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	if !s.GenerationChanged(ctx, obj, old) {
		return nil
	}
	return s.WarningsOnCreate(ctx, obj)
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
