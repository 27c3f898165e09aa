package customresource

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Strategy is the strategy of one served version of a CRD: status is
// reset on create and kept on update when the status subresource is
// enabled; any change outside metadata bumps the generation (with the
// status subresource that leaves spec and the other top-level fields);
// writes are pruned and defaulted, then checked for apiVersion and kind
// and against the schema and its x-kubernetes-validations rules.
type Strategy struct {
	namespaced    bool
	kind          schema.GroupVersionKind
	statusEnabled bool
	validator     *structuralschema.Validator
	cel           *cel.Validator // x-kubernetes-validations, or nil
	// schema is the version's structural schema (pruning, defaulting),
	// or nil.
	schema *apiextensionsv1.JSONSchemaProps
	// scale is the version's scale subresource, or nil: its replicas
	// paths are checked on every write.
	scale *apiextensionsv1.CustomResourceSubresourceScale
	// statusSchema and statusValidator validate the status alone on
	// /status writes (nil: the schema has no status property).
	statusSchema    *apiextensionsv1.JSONSchemaProps
	statusValidator *structuralschema.Validator
	// celMetrics observes the rules' compilations and evaluations and
	// each update's ratcheting time (nil: none).
	celMetrics *cel.Metrics
}

// NewStrategy returns the strategy of version v of crd, served as kind.
// The CRD validation reported the errors of v's rules when the CRD was
// written; a rule that does not compile (a CRD stored before a check)
// fails the values it checks, as upstream. m (nil: none) records the
// CEL and ratcheting metrics.
func NewStrategy(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion, kind schema.GroupVersionKind, m *cel.Metrics) (Strategy, error) {
	s := Strategy{
		namespaced:    crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		kind:          kind,
		statusEnabled: v.Subresources != nil && v.Subresources.Status != nil,
		celMetrics:    m,
	}
	if v.Subresources != nil {
		s.scale = v.Subresources.Scale
	}
	if v.Schema == nil {
		return s, nil
	}
	var err error
	if s.validator, err = structuralschema.NewValidator(v.Schema.OpenAPIV3Schema); err != nil {
		return Strategy{}, fmt.Errorf("schema: %w", err)
	}
	s.cel, _ = cel.NewValidatorWithOptions(v.Schema.OpenAPIV3Schema, nil, cel.Options{Metrics: m, Serving: true})
	s.schema = v.Schema.OpenAPIV3Schema
	if st, ok := s.schema.Properties["status"]; ok {
		s.statusSchema = &st
		if s.statusValidator, err = structuralschema.NewValidator(s.statusSchema); err != nil {
			return Strategy{}, fmt.Errorf("status schema: %w", err)
		}
	}
	return s, nil
}

// Schema is the version's structural schema, or nil.
func (s Strategy) Schema() *apiextensionsv1.JSONSchemaProps { return s.schema }

// StatusEnabled reports whether the version has the status subresource.
func (s Strategy) StatusEnabled() bool { return s.statusEnabled }

var (
	_ generic.CreateStrategy     = Strategy{}
	_ generic.UpdateStrategy     = Strategy{}
	_ generic.GenerationStrategy = Strategy{}
)

func (s Strategy) NamespaceScoped() bool { return s.namespaced }

func (s Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.statusEnabled {
		delete(obj.(*unstructured.Unstructured).Object, "status")
	}
	s.pruneAndDefault(obj.(*unstructured.Unstructured))
}

func (s Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validateWithRules(obj.(*unstructured.Unstructured), nil)
}

// validateWithRules validates as upstream's customResourceStrategy
// Validate and ValidateUpdate (apiextensions-apiserver v0.37
// pkg/registry/customresource/strategy.go), in its order: type meta and
// schema (validate), the embedded resources, the x-kubernetes-list-type
// set and map invariants (on update, only when the old object kept them:
// ratcheting), then the CEL rules — unless an error so far is of a type
// that blocks them, which adds upstream's "some validation rules were not
// checked" error instead (old is nil on create).
func (s Strategy) validateWithRules(u, old *unstructured.Unstructured) field.ErrorList {
	var oldObj map[string]any
	var ratchet *time.Duration
	if old != nil {
		oldObj = old.Object
		// Upstream observes the ratcheting time of every update.
		ratchet = new(time.Duration)
		defer func() { s.celMetrics.ObserveRatcheting(*ratchet) }()
	}
	errs := s.validate(u, oldObj, ratchet)
	errs = append(errs, structuralschema.ValidateEmbeddedResources(u.Object, s.schema)...)
	if old == nil || len(structuralschema.ValidateListSetsAndMaps(oldObj, s.schema)) == 0 {
		errs = append(errs, structuralschema.ValidateListSetsAndMaps(u.Object, s.schema)...)
	}
	if s.cel == nil {
		return errs
	}
	if blocksRules(errs) || s.metadataBlocksRules(u, old) {
		return append(errs, field.Invalid(nil, nil, rulesNotChecked))
	}
	return append(errs, s.cel.ValidateRatcheting(u.Object, oldObj, ratchet)...)
}

// metadataBlocksRules tells whether u's metadata has an error that keeps
// the CEL rules from running: upstream validates a custom resource's
// metadata in its strategy, before the rules (customResourceValidator), so
// a missing name ("name or generateName is required", Required) blocks
// them as a schema error does. kapi's store reports the metadata errors
// itself (generic.Store); they are only looked at here.
func (s Strategy) metadataBlocksRules(u, old *unstructured.Unstructured) bool {
	path := field.NewPath("metadata")
	if old != nil {
		// An update's: upstream's validateObjectMetaUpdateDeclaratively.
		return blocksRules(metavalidation.ValidateObjectMetaAccessorUpdate(u, old, path))
	}
	return blocksRules(metavalidation.ValidateObjectMetaAccessor(u, s.namespaced, metavalidation.NameIsDNSSubdomain, path))
}

// validateStatusWithRules validates a /status write as upstream's status
// strategy (apiextensions-apiserver v0.37
// pkg/registry/customresource/status_strategy.go): the type meta, then
// the status alone against its schema (errors under "status", messages
// relative to it), the scale subresource's status paths, the list-type
// invariants (ratcheted), then the CEL rules unless blocked. Embedded
// resources are not checked there.
func (s Strategy) validateStatusWithRules(u, old *unstructured.Unstructured) field.ErrorList {
	ratchet := new(time.Duration)
	defer func() { s.celMetrics.ObserveRatcheting(*ratchet) }()
	var errs field.ErrorList
	if k := u.GetKind(); k != s.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), k, fmt.Sprintf("must be %v", s.kind.Kind)))
	}
	if v, want := u.GetAPIVersion(), s.kind.GroupVersion().String(); v != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), v, fmt.Sprintf("must be %v", want)))
	}
	if len(errs) == 0 {
		if status, ok := u.Object["status"]; ok {
			errs = append(errs, s.statusValidator.ValidateUnder("status", status, old.Object["status"], s.statusSchema)...)
		}
		errs = append(errs, validateScale(u.Object, s.scale, true)...)
	}
	if len(structuralschema.ValidateListSetsAndMaps(old.Object, s.schema)) == 0 {
		errs = append(errs, structuralschema.ValidateListSetsAndMaps(u.Object, s.schema)...)
	}
	if s.cel == nil {
		return errs
	}
	if blocksRules(errs) || s.metadataBlocksRules(u, old) {
		return append(errs, field.Invalid(nil, nil, rulesNotChecked))
	}
	return append(errs, s.cel.ValidateRatcheting(u.Object, old.Object, ratchet)...)
}

// rulesNotChecked is upstream's error when a blocking error kept the CEL
// rules from running (hasBlockingErr).
const rulesNotChecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// blocksRules tells whether errs hold an error after which upstream does
// not run a CRD's CEL rules (hasBlockingErr): a value of the wrong type,
// unsupported, missing or too large, which a rule could not evaluate.
func blocksRules(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// validate checks the type meta, then the schema; on update (old not
// nil) errors of unchanged values ratchet (see
// structuralschema.Validator.ValidateUpdate).
func (s Strategy) validate(u *unstructured.Unstructured, old map[string]any, ratchet *time.Duration) field.ErrorList {
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
		errs = s.validator.ValidateUpdateRatcheting(u.Object, old, s.schema, ratchet)
	} else {
		errs = s.validator.Validate(u.Object)
	}
	return append(errs, validateScale(u.Object, s.scale, false)...)
}

// validateScale checks the values at the scale subresource's paths, as
// upstream's customResourceValidator ValidateScaleSpec and
// ValidateScaleStatus (apiextensions-apiserver v0.37
// pkg/registry/customresource/validator.go): the replicas are absent or a
// non-negative int32, the label selector absent or a string. The path is
// the one the CRD gives (".spec.replicas"), as one field path element.
func validateScale(obj map[string]any, scale *apiextensionsv1.CustomResourceSubresourceScale, statusOnly bool) field.ErrorList {
	if scale == nil {
		return nil
	}
	var errs field.ErrorList
	replicas := func(path string) {
		n, _, err := unstructured.NestedInt64(obj, strings.Split(strings.TrimPrefix(path, "."), ".")...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(path), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(path), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if !statusOnly {
		replicas(scale.SpecReplicasPath)
	}
	replicas(scale.StatusReplicasPath)
	if p := scale.LabelSelectorPath; p != nil {
		sel, _, err := unstructured.NestedString(obj, strings.Split(strings.TrimPrefix(*p, "."), ".")...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*p), sel, err.Error()))
		}
	}
	return errs
}

func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (Strategy) Canonicalize(runtime.Object) {}

func (Strategy) AllowCreateOnUpdate() bool { return false }

func (s Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if s.statusEnabled {
		// Both are unstructured objects of this store: cannot fail.
		_ = generic.CopyStatus(obj, old)
	}
	s.pruneAndDefault(obj.(*unstructured.Unstructured))
}

func (s Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validateWithRules(obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured))
}

func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (Strategy) AllowUnconditionalUpdate() bool { return false }

// GenerationChanged implements generic.GenerationStrategy: anything but
// metadata changed.
func (Strategy) GenerationChanged(_ context.Context, obj, old runtime.Object) bool {
	a, b := obj.(*unstructured.Unstructured).Object, old.(*unstructured.Unstructured).Object
	for k, v := range a {
		if k != "metadata" && !semanticEqual(v, b[k]) {
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
func (s Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.statusEnabled {
		return nil
	}
	return generic.ResetFields([]schema.GroupVersion{s.kind.GroupVersion()}, []string{"status"})
}

// StatusStrategy is the /status strategy of the version.
func (s Strategy) StatusStrategy() generic.StatusStrategy {
	return generic.StatusStrategy{
		UpdateStrategy: s,
		ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
			// StatusStrategy's PrepareForUpdate is fixed: prune and
			// default here, before validating.
			s.pruneAndDefault(obj.(*unstructured.Unstructured))
			return s.validateStatusWithRules(obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured))
		},
		GroupVersions: []schema.GroupVersion{s.kind.GroupVersion()},
	}
}

// pruneAndDefault prunes u against the strategy's schema, then applies
// the defaults. Writes through the handlers come pruned (and reported,
// see PruneUnknownFields); this catches the others.
func (s Strategy) pruneAndDefault(u *unstructured.Unstructured) {
	if s.schema == nil {
		return
	}
	structuralschema.Prune(u.Object, s.schema)
	structuralschema.ApplyDefaults(u.Object, s.schema)
}
