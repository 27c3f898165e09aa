package apiextensions

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// crStrategy is the strategy of one served version of a CRD: status is
// reset on create and kept on update when the status subresource is
// enabled; any change outside metadata bumps the generation (with the
// status subresource that leaves spec and the other top-level fields);
// writes are checked for apiVersion and kind and against the schema.
type crStrategy struct {
	namespaced    bool
	kind          schema.GroupVersionKind
	statusEnabled bool
	validator     *schemaValidator
	cel           *celValidator // x-kubernetes-validations, or nil
	// schema is the version's structural schema (pruning, defaulting),
	// or nil.
	schema *apiextensionsv1.JSONSchemaProps
}

var (
	_ generic.CreateStrategy     = crStrategy{}
	_ generic.UpdateStrategy     = crStrategy{}
	_ generic.GenerationStrategy = crStrategy{}
)

func (s crStrategy) NamespaceScoped() bool { return s.namespaced }

func (s crStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	if s.statusEnabled {
		delete(obj.(*unstructured.Unstructured).Object, "status")
	}
	s.pruneAndDefault(ctx, obj.(*unstructured.Unstructured))
}

func (s crStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validateWithRules(obj.(*unstructured.Unstructured), nil)
}

// validateWithRules runs validate, then, when the object is valid, the
// CEL rules (old is nil on create).
func (s crStrategy) validateWithRules(u, old *unstructured.Unstructured) field.ErrorList {
	var oldObj map[string]any
	if old != nil {
		oldObj = old.Object
	}
	if errs := s.validate(u, oldObj); len(errs) > 0 {
		return errs
	}
	return s.cel.validate(u.Object, oldObj)
}

// validate checks the type meta, then the schema; on update (old not
// nil) errors of unchanged values ratchet (see validateUpdate).
func (s crStrategy) validate(u *unstructured.Unstructured, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	if k := u.GetKind(); k != s.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), k, fmt.Sprintf("must be %v", s.kind.Kind)))
	}
	if v, want := u.GetAPIVersion(), s.kind.GroupVersion().String(); v != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), v, fmt.Sprintf("must be %v", want)))
	}
	if len(errs) > 0 {
		return errs
	}
	if old != nil {
		return s.validator.validateUpdate(u.Object, old, s.schema)
	}
	return s.validator.validate(u.Object)
}

func (crStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (crStrategy) Canonicalize(runtime.Object) {}

func (crStrategy) AllowCreateOnUpdate() bool { return false }

func (s crStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	if s.statusEnabled {
		// Both are unstructured objects of this store: cannot fail.
		_ = generic.CopyStatus(obj, old)
	}
	s.pruneAndDefault(ctx, obj.(*unstructured.Unstructured))
}

func (s crStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validateWithRules(obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured))
}

func (crStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (crStrategy) AllowUnconditionalUpdate() bool { return false }

// GenerationChanged implements generic.GenerationStrategy: anything but
// metadata changed.
func (crStrategy) GenerationChanged(_ context.Context, obj, old runtime.Object) bool {
	a, b := obj.(*unstructured.Unstructured).Object, old.(*unstructured.Unstructured).Object
	for k, v := range a {
		if k != "metadata" && !equality.Semantic.DeepEqual(v, b[k]) {
			return true
		}
	}
	for k := range b {
		if _, ok := a[k]; k != "metadata" && !ok {
			return true
		}
	}
	return false
}

// GetResetFields implements rest.ResetFieldsStrategy: status, when it is
// a subresource.
func (s crStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.statusEnabled {
		return nil
	}
	return generic.ResetFields([]schema.GroupVersion{s.kind.GroupVersion()}, []string{"status"})
}

// statusStrategy is the /status strategy of the version.
func (s crStrategy) statusStrategy() generic.StatusStrategy {
	return generic.StatusStrategy{
		UpdateStrategy: s,
		ValidateStatus: func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
			// StatusStrategy's PrepareForUpdate is fixed: prune and
			// default here, before validating.
			s.pruneAndDefault(ctx, obj.(*unstructured.Unstructured))
			return s.validateWithRules(obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured))
		},
		GroupVersions: []schema.GroupVersion{s.kind.GroupVersion()},
	}
}
