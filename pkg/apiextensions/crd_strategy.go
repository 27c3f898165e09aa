package apiextensions

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// crdStrategy is the strategy of customresourcedefinitions: cluster
// scoped, status ignored (and reset on create), generation bumped on spec
// changes, the storage version recorded in status.storedVersions.
type crdStrategy struct {
	// celMetrics observes the compilations of the CRD's rules (nil: none).
	celMetrics *cel.Metrics
}

var (
	_ generic.CreateStrategy     = crdStrategy{}
	_ generic.UpdateStrategy     = crdStrategy{}
	_ generic.GenerationStrategy = crdStrategy{}
)

var crdGroupVersions = []schema.GroupVersion{apiextensionsv1.SchemeGroupVersion}

func (crdStrategy) NamespaceScoped() bool { return false }

func (crdStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	scheme.Scheme.Default(crd)
	addStoredVersion(crd)
}

func (s crdStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateCRD(obj.(*apiextensionsv1.CustomResourceDefinition), s.celMetrics)
}

func (crdStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (crdStrategy) Canonicalize(runtime.Object) {}

func (crdStrategy) AllowCreateOnUpdate() bool { return false }

func (crdStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = *old.(*apiextensionsv1.CustomResourceDefinition).Status.DeepCopy()
	scheme.Scheme.Default(crd)
	addStoredVersion(crd)
}

func (s crdStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateCRDUpdate(obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition), s.celMetrics)
}

func (crdStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (crdStrategy) AllowUnconditionalUpdate() bool { return false }

// GenerationChanged implements generic.GenerationStrategy: spec changes.
func (crdStrategy) GenerationChanged(_ context.Context, obj, old runtime.Object) bool {
	return !equality.Semantic.DeepEqual(obj.(*apiextensionsv1.CustomResourceDefinition).Spec, old.(*apiextensionsv1.CustomResourceDefinition).Spec)
}

// GetResetFields implements rest.ResetFieldsStrategy: status.
func (crdStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(crdGroupVersions, []string{"status"})
}

// crdStatusStrategy is the /status strategy: only status changes, and the
// accepted names are validated.
var crdStatusStrategy = generic.StatusStrategy{
	UpdateStrategy: crdStrategy{},
	ValidateStatus: func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return validateStatusUpdate(obj.(*apiextensionsv1.CustomResourceDefinition))
	},
	GroupVersions: crdGroupVersions,
}
