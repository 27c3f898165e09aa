package generic

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// errEmptiedFinalizers ends an update whose object must be deleted instead.
var errEmptiedFinalizers = errors.New("emptied finalizers")

// Update implements rest.Updater. It reports whether the object was
// created (PUT of a missing object, when the strategy or forceAllowCreate
// allows it).
func (e *Store) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if options == nil {
		options = &metav1.UpdateOptions{}
	}
	dryRun := isDryRun(options.DryRun)
	qr := e.qualifiedResource(ctx)
	preconditions := &storage.Preconditions{}
	if p := objInfo.Preconditions(); p != nil {
		preconditions.UID = p.UID
		preconditions.ResourceVersion = p.ResourceVersion
	}

	var (
		creating    bool
		creatingObj runtime.Object
		deleteObj   runtime.Object
	)
	out := e.NewFunc()
	err = e.storageUpdate(ctx, key, out, true, preconditions, func(existing runtime.Object) (runtime.Object, error) {
		creating, creatingObj, deleteObj = false, nil, nil
		existingRV, err := storage.ObjectResourceVersion(existing)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if existingRV == 0 && (!e.UpdateStrategy.AllowCreateOnUpdate() && !forceAllowCreate || e.CreateStrategy == nil) {
			return nil, apierrors.NewNotFound(qr, name)
		}
		obj, err := objInfo.UpdatedObject(ctx, existing)
		if err != nil {
			return nil, err
		}
		newRV, err := storage.ObjectResourceVersion(obj)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("metadata.resourceVersion: %v", err))
		}

		if existingRV == 0 {
			creating, creatingObj = true, obj
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			fillSystemFields(m)
			if err := storage.SetObjectResourceVersion(obj, 0); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if err := e.guard("validating the object", func() error { return e.beforeCreate(ctx, obj) }); err != nil {
				return nil, err
			}
			if createValidation != nil {
				if err := e.guard("admission", func() error { return createValidation(ctx, obj.DeepCopyObject()) }); err != nil {
					return nil, err
				}
			}
			return obj, nil
		}

		switch {
		case newRV == 0 && e.UpdateStrategy.AllowUnconditionalUpdate():
			if err := storage.SetObjectResourceVersion(obj, existingRV); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		case newRV == 0:
			// As kube: the Invalid error names the resource in its kind.
			qk := schema.GroupKind{Group: qr.Group, Kind: qr.Resource}
			return nil, apierrors.NewInvalid(qk, name, field.ErrorList{
				field.Invalid(field.NewPath("metadata").Child("resourceVersion"), newRV, "must be specified for an update")})
		case newRV != existingRV:
			return nil, apierrors.NewConflict(qr, name, errors.New(OptimisticLockErrorMsg))
		}
		if err := e.guard("validating the object", func() error { return e.beforeUpdate(ctx, obj, existing) }); err != nil {
			return nil, err
		}
		// A change of managed fields times alone is no change (upstream's
		// IgnoreManagedFieldsTimestampsTransformer, here too).
		revertTimestampOnlyChanges(ctx, obj, existing)
		if updateValidation != nil {
			vObj, vOld := obj, existing
			if rest.UpdateObjectsRead(ctx) {
				vObj, vOld = obj.DeepCopyObject(), existing.DeepCopyObject()
			}
			if err := e.guard("admission", func() error { return updateValidation(ctx, vObj, vOld) }); err != nil {
				return nil, err
			}
		}
		newMeta, err := meta.Accessor(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		oldMeta, err := meta.Accessor(existing)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if ShouldDeleteDuringUpdate(newMeta, oldMeta) &&
			(e.ShouldDeleteDuringUpdate == nil || e.ShouldDeleteDuringUpdate(ctx, key, obj, existing)) {
			deleteObj = obj
			return nil, errEmptiedFinalizers
		}
		return obj, nil
	}, dryRun)
	if err != nil {
		if errors.Is(err, errEmptiedFinalizers) {
			return e.deleteWithoutFinalizers(ctx, name, key, deleteObj, preconditions, dryRun)
		}
		if creating {
			err = interpret(err, qr, name, "create")
			if apierrors.IsAlreadyExists(err) {
				if m, errAcc := meta.Accessor(creatingObj); errAcc == nil && m.GetGenerateName() != "" {
					err = apierrors.NewGenerateNameConflict(qr, name, 1)
				}
			}
			return nil, false, err
		}
		return nil, false, interpretUpdateError(err, qr, name)
	}
	return out, creating, nil
}

// interpretUpdateError is interpret for writes to an existing object: as
// kube, a key that appeared meanwhile is a conflict too.
func interpretUpdateError(err error, qr schema.GroupResource, name string) error {
	if storage.IsExists(err) {
		return apierrors.NewConflict(qr, name, errors.New(OptimisticLockErrorMsg))
	}
	return interpret(err, qr, name, "update")
}

// beforeUpdate is kube's rest.BeforeUpdate: namespace, the server-owned
// metadata kept from old, strategy preparation, generation, validation,
// warnings, canonicalization.
func (e *Store) beforeUpdate(ctx context.Context, obj, old runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	gvk, err := e.objectKind(obj)
	if err != nil {
		return err
	}
	namespaced := e.UpdateStrategy.NamespaceScoped()
	if err := EnsureObjectNamespaceMatchesRequestNamespace(expectedNamespace(ctx, namespaced), m); err != nil {
		return err
	}
	// Requests cannot set the generation.
	m.SetGeneration(oldMeta.GetGeneration())

	e.UpdateStrategy.PrepareForUpdate(ctx, obj, old)

	if m.GetUID() == "" {
		m.SetUID(oldMeta.GetUID())
	}
	if ts := oldMeta.GetCreationTimestamp(); !ts.IsZero() {
		m.SetCreationTimestamp(ts)
	}
	// Only a delete sets or changes the deletion timestamp and grace period.
	if oldMeta.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(oldMeta.GetDeletionTimestamp())
	}
	if oldMeta.GetDeletionGracePeriodSeconds() != nil && m.GetDeletionGracePeriodSeconds() == nil {
		m.SetDeletionGracePeriodSeconds(oldMeta.GetDeletionGracePeriodSeconds())
	}
	if g, ok := e.UpdateStrategy.(GenerationStrategy); ok && g.GenerationChanged(ctx, obj, old) {
		m.SetGeneration(oldMeta.GetGeneration() + 1)
	}

	vm := &validationMeta{Object: m}
	errs := validateObjectMeta(vm, namespaced, e.NameValidator)
	errs = append(errs, validateObjectMetaUpdate(vm, oldMeta)...)
	errs = append(errs, e.UpdateStrategy.ValidateUpdate(ctx, obj, old)...)
	if len(errs) > 0 {
		errs = orderDeclarative(obj, internalValues(obj, errs))
		// Upstream counts the repeats among the errors it answers with
		// (built-in types' come deduplicated, see orderDeclarative).
		if n := len(errs) - len(distinctErrors(errs)); n > 0 {
			rest.DuplicateValidationErrors(ctx, n)
		}
		return apierrors.NewInvalid(gvk.GroupKind(), m.GetName(), errs)
	}
	for _, w := range e.UpdateStrategy.WarningsOnUpdate(ctx, obj, old) {
		warning.AddWarning(ctx, w)
	}
	e.UpdateStrategy.Canonicalize(obj)
	return nil
}

// deleteWithoutFinalizers deletes an object whose last finalizer an update
// removed. As kube, it answers the updated object (not a Status) and
// created=false; a concurrent delete that won is not an error.
func (e *Store) deleteWithoutFinalizers(ctx context.Context, name, key string, obj runtime.Object,
	preconditions *storage.Preconditions, dryRun bool) (runtime.Object, bool, error) {
	out := e.NewFunc()
	if err := e.storageDelete(ctx, key, out, preconditions, nil, dryRun); err != nil {
		if storage.IsNotFound(err) {
			return obj, false, nil
		}
		return nil, false, interpret(err, e.qualifiedResource(ctx), name, "delete")
	}
	return obj, false, nil
}
