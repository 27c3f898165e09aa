package generic

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CreateStrategy is a resource's behaviour on create. Metadata is prepared
// and validated by the [Store]; the strategy handles the rest of the
// object.
type CreateStrategy interface {
	// NamespaceScoped reports whether objects live in namespaces.
	NamespaceScoped() bool
	// PrepareForCreate normalizes obj before validation: typically clears
	// status (users do not set an initial status) and fills defaults. It
	// must not remove fields whose presence validation would reject.
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	// Validate returns the errors of obj outside metadata (the store
	// validates metadata first). It must not mutate obj.
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	// WarningsOnCreate returns warnings for the client (Warning headers).
	// It must not mutate obj.
	WarningsOnCreate(ctx context.Context, obj runtime.Object) []string
	// Canonicalize mutates a valid obj into its canonical form before it is
	// stored.
	Canonicalize(obj runtime.Object)
}

// UpdateStrategy is a resource's behaviour on update.
type UpdateStrategy interface {
	// NamespaceScoped reports whether objects live in namespaces.
	NamespaceScoped() bool
	// AllowCreateOnUpdate reports whether PUT of a missing object creates it.
	AllowCreateOnUpdate() bool
	// PrepareForUpdate normalizes obj given the stored old before
	// validation: typically keeps old's status (the main resource ignores
	// status, see [CopyStatus]) or everything but status (the /status
	// subresource, see [CopyAllButStatus]).
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	// ValidateUpdate returns the errors of the update outside metadata. It
	// must not mutate obj.
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// WarningsOnUpdate returns warnings for the client.
	WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string
	// Canonicalize mutates a valid obj into its canonical form.
	Canonicalize(obj runtime.Object)
	// AllowUnconditionalUpdate reports whether an update without a
	// resourceVersion overwrites the stored object (otherwise it is 422
	// Invalid: metadata.resourceVersion must be specified).
	AllowUnconditionalUpdate() bool
}

// DeleteStrategy makes a resource's deletion graceful. A Store without a
// DeleteStrategy deletes objects at once (unless finalizers hold them).
type DeleteStrategy interface {
	// CheckGracefulDelete reports whether obj is deleted gracefully; it may
	// set options.GracePeriodSeconds (which must be set when it returns
	// true). A graceful deletion with a positive grace period only sets
	// deletionTimestamp and deletionGracePeriodSeconds: whoever owns the
	// object (e.g. a kubelet) deletes it again with a zero grace period.
	CheckGracefulDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool
}

// GarbageCollectionPolicy is a resource's default propagation policy.
type GarbageCollectionPolicy string

// Garbage collection policies, as kube's.
const (
	// DeleteDependents (the default) deletes dependents in the background.
	DeleteDependents GarbageCollectionPolicy = "DeleteDependents"
	// OrphanDependents orphans dependents unless the request says otherwise.
	OrphanDependents GarbageCollectionPolicy = "OrphanDependents"
	// Unsupported: deletion never adds the orphan or foregroundDeletion
	// finalizers.
	Unsupported GarbageCollectionPolicy = "Unsupported"
)

// GarbageCollectionDeleteStrategy may be implemented by a DeleteStrategy
// to change the default propagation policy.
type GarbageCollectionDeleteStrategy interface {
	DefaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy
}

// GenerationStrategy may be implemented by a CreateStrategy and an
// UpdateStrategy of a resource whose metadata.generation tracks its desired
// state (types with a spec): the store sets generation to 1 on create and
// bumps it by one on an update for which GenerationChanged is true (after
// PrepareForUpdate, so a /status update that keeps the spec never bumps
// it). Embed [SpecGeneration] for the usual rule.
type GenerationStrategy interface {
	GenerationChanged(ctx context.Context, obj, old runtime.Object) bool
}

// NoGenerationOnCreate may be implemented by the CreateStrategy of a
// GenerationStrategy whose upstream strategy bumps the generation on spec
// changes but never sets it on create (CSIDriver: 0, omitted, until the
// first spec change makes it 1).
type NoGenerationOnCreate interface {
	NoGenerationOnCreate()
}

// FixedGeneration is a GenerationStrategy whose generation is set to 1 on
// create and never changes (upstream's PriorityClass strategy).
type FixedGeneration struct{}

// GenerationChanged implements [GenerationStrategy]: never.
func (FixedGeneration) GenerationChanged(context.Context, runtime.Object, runtime.Object) bool {
	return false
}

// SpecGeneration is the usual GenerationStrategy: the generation changes
// when anything but metadata and status changes (see [SpecChanged]).
type SpecGeneration struct{}

// GenerationChanged implements [GenerationStrategy].
func (SpecGeneration) GenerationChanged(_ context.Context, obj, old runtime.Object) bool {
	return SpecChanged(obj, old)
}

// SpecChanged reports whether obj and old differ in anything but their
// type meta, metadata and status (semantic equality, as kube compares
// specs). It works on typed objects (pointers to structs) and on
// unstructured objects.
func SpecChanged(obj, old runtime.Object) bool {
	if u, ok := obj.(runtime.Unstructured); ok {
		o, ok := old.(runtime.Unstructured)
		if !ok {
			return true
		}
		a, b := u.UnstructuredContent(), o.UnstructuredContent()
		skip := map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "status": true}
		for k, v := range a {
			if !skip[k] && !equality.Semantic.DeepEqual(v, b[k]) {
				return true
			}
		}
		for k := range b {
			if _, in := a[k]; !skip[k] && !in {
				return true
			}
		}
		return false
	}
	a, b := reflect.ValueOf(obj), reflect.ValueOf(old)
	if a.Kind() != reflect.Pointer || b.Kind() != reflect.Pointer || a.Type() != b.Type() || a.IsNil() || b.IsNil() {
		return true
	}
	a, b = a.Elem(), b.Elem()
	if a.Kind() != reflect.Struct {
		return !equality.Semantic.DeepEqual(obj, old)
	}
	t := a.Type()
	for i := range t.NumField() {
		switch f := t.Field(i); {
		case !f.IsExported(), f.Name == "TypeMeta", f.Name == "ObjectMeta", f.Name == "Status":
			continue
		}
		if !equality.Semantic.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return true
		}
	}
	return false
}

// ShouldDeleteDuringUpdate is kube's rule for an update that deletes: the
// new object has no finalizers left and the stored one was being deleted
// with no grace period left (nil or 0).
func ShouldDeleteDuringUpdate(obj, existing metav1.Object) bool {
	if len(obj.GetFinalizers()) > 0 || existing.GetDeletionTimestamp() == nil {
		return false
	}
	g := existing.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}
