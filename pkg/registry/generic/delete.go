package generic

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Outcomes of the update that marks an object for deletion.
var (
	errAlreadyDeleting = errors.New("abort delete")
	errDeleteNow       = errors.New("delete now")
)

// Delete implements rest.GracefulDeleter. It reports whether the object is
// gone (true) or only marked for deletion (false: finalizers or a grace
// period hold it; the marked object is returned). A nil options deletes at
// once, as kube.
//
// The flow is kube's: read; check the options and preconditions; an object
// already being deleted gracefully is answered as is; if the deletion is
// graceful, the object has finalizers, or the propagation policy changes
// its finalizers, an update sets deletionTimestamp (and the finalizers);
// objects with no finalizers and no grace period left are then deleted.
func (e *Store) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if deleteValidation == nil {
		deleteValidation = rest.ValidateAllObjectFunc
	}
	qr := e.qualifiedResource(ctx)
	obj := e.NewFunc()
	if err := e.Storage.Get(ctx, key, storage.GetOptions{}, obj); err != nil {
		return nil, false, interpret(err, qr, name, "delete")
	}
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	dryRun := isDryRun(options.DryRun)
	var preconditions storage.Preconditions
	if options.Preconditions != nil {
		preconditions.UID = options.Preconditions.UID
		preconditions.ResourceVersion = options.Preconditions.ResourceVersion
	}
	graceful, pendingGraceful, err := e.beforeDelete(ctx, obj, options)
	if err != nil {
		return nil, false, err
	}
	// Finalizers cannot be changed by a delete once graceful deletion is
	// pending.
	if pendingGraceful {
		out, err := e.finalizeDelete(ctx, obj)
		return out, false, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	pendingFinalizers := len(m.GetFinalizers()) != 0
	updateFinalizers, _ := e.deletionFinalizers(ctx, m, options)

	deleteImmediately := true
	var ignoreNotFound bool
	var out, lastExisting runtime.Object
	if graceful || pendingFinalizers || updateFinalizers {
		err, ignoreNotFound, deleteImmediately, out, lastExisting = e.updateForGracefulDeletionAndFinalizers(ctx, name, key, options, preconditions, deleteValidation, obj)
		// The update changed the resourceVersion a precondition names.
		if err == nil && deleteImmediately && preconditions.ResourceVersion != nil {
			om, errAcc := meta.Accessor(out)
			if errAcc != nil {
				return out, false, apierrors.NewInternalError(errAcc)
			}
			rv := om.GetResourceVersion()
			preconditions.ResourceVersion = &rv
		}
	}
	if err != nil || !deleteImmediately {
		return out, false, err
	}
	// A dry run that already computed the marked object stops here (the
	// stored object does not have the marks).
	if dryRun && out != nil {
		return out, true, nil
	}
	out = e.NewFunc()
	if err := e.storageDelete(ctx, key, out, &preconditions, storage.ValidateObjectFunc(deleteValidation), dryRun); err != nil {
		// A graceless delete may race with whoever completes the deletion.
		if storage.IsNotFound(err) && ignoreNotFound && lastExisting != nil {
			out, err := e.finalizeDelete(ctx, lastExisting)
			return out, true, err
		}
		return nil, false, interpretDeleteError(err, qr, name)
	}
	out, err = e.finalizeDelete(ctx, out)
	return out, true, err
}

// interpretDeleteError is interpret for deletes (conflicts are 409).
func interpretDeleteError(err error, qr schema.GroupResource, name string) error {
	return interpret(err, qr, name, "delete")
}

// beforeDelete is kube's rest.BeforeDelete: it validates options, checks
// preconditions early, and for graceful strategies computes the deletion
// timestamp. graceful: obj was marked for graceful deletion (an update is
// needed); pendingGraceful: a graceful deletion is already under way and
// this delete does not shorten it.
func (e *Store) beforeDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) (graceful, pendingGraceful bool, err error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, false, apierrors.NewInternalError(err)
	}
	gvk, err := e.objectKind(obj)
	if err != nil {
		return false, false, err
	}
	if errs := metav1validation.ValidateDeleteOptions(options); len(errs) > 0 {
		return false, false, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	// As kube: these conflicts name the kind where a resource would be.
	kindAsResource := schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
	if p := options.Preconditions; p != nil {
		if p.UID != nil && *p.UID != m.GetUID() {
			return false, false, apierrors.NewConflict(kindAsResource, m.GetName(), fmt.Errorf(
				"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
				*p.UID, m.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return false, false, apierrors.NewConflict(kindAsResource, m.GetName(), fmt.Errorf(
				"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
				*p.ResourceVersion, m.GetResourceVersion()))
		}
	}
	// Negative grace periods mean 1s.
	if g := options.GracePeriodSeconds; g != nil && *g < 0 {
		options.GracePeriodSeconds = ptr(int64(1))
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil && *g < 0 {
		m.SetDeletionGracePeriodSeconds(ptr(int64(1)))
	}
	if e.DeleteStrategy == nil {
		return false, false, nil
	}
	if ts := m.GetDeletionTimestamp(); ts != nil {
		current := m.GetDeletionGracePeriodSeconds()
		// Marked with no grace period: delete now (this also recovers an
		// object whose mark succeeded and whose delete failed).
		if current == nil || *current == 0 {
			return false, false, nil
		}
		// A delete may only shorten the grace period.
		if options.GracePeriodSeconds != nil {
			period := *options.GracePeriodSeconds
			if period >= *current {
				return false, true, nil
			}
			newTS := metav1.NewTime(ts.Add(-time.Second * time.Duration(*current)).Add(time.Second * time.Duration(period)))
			m.SetDeletionTimestamp(&newTS)
			m.SetDeletionGracePeriodSeconds(&period)
			return true, false, nil
		}
		options.GracePeriodSeconds = current
		return false, true, nil
	}
	if !e.DeleteStrategy.CheckGracefulDelete(ctx, obj, options) {
		return false, false, nil
	}
	if options.GracePeriodSeconds == nil {
		return false, false, apierrors.NewInternalError(errors.New("options.GracePeriodSeconds should not be nil"))
	}
	ts := metav1.NewTime(metav1.Now().Add(time.Second * time.Duration(*options.GracePeriodSeconds)))
	m.SetDeletionTimestamp(&ts)
	m.SetDeletionGracePeriodSeconds(options.GracePeriodSeconds)
	// The object changes (it may wait for finalizers): bump the generation.
	if m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	return true, false, nil
}

// updateForGracefulDeletionAndFinalizers marks the stored object for
// deletion (timestamp, grace period, finalizers of the propagation
// policy). It returns: the error; whether a NotFound of the following
// delete is to be ignored; whether to delete now; the marked object; the
// last state read.
func (e *Store) updateForGracefulDeletionAndFinalizers(ctx context.Context, name, key string, options *metav1.DeleteOptions,
	preconditions storage.Preconditions, deleteValidation rest.ValidateObjectFunc, in runtime.Object) (err error, ignoreNotFound, deleteImmediately bool, out, lastExisting runtime.Object) {
	var lastGraceful int64
	var pendingFinalizers bool
	out = e.NewFunc()
	err = e.storageUpdate(ctx, key, out, false, &preconditions, func(existing runtime.Object) (runtime.Object, error) {
		lastGraceful, pendingFinalizers, lastExisting = 0, false, nil
		if err := deleteValidation(ctx, existing); err != nil {
			return nil, err
		}
		graceful, pendingGraceful, err := e.beforeDelete(ctx, existing, options)
		if err != nil {
			return nil, err
		}
		if pendingGraceful {
			return nil, errAlreadyDeleting
		}
		m, err := meta.Accessor(existing)
		if err != nil {
			return nil, err
		}
		if update, finalizers := e.deletionFinalizers(ctx, m, options); update {
			m.SetFinalizers(finalizers)
		}
		pendingFinalizers = len(m.GetFinalizers()) != 0
		if !graceful {
			// Finalizers hold an object without graceful deletion: mark it
			// with a zero grace period.
			if pendingFinalizers {
				markAsDeleting(m, time.Now())
				return existing, nil
			}
			return nil, errDeleteNow
		}
		lastGraceful = *options.GracePeriodSeconds
		lastExisting = existing
		return existing, nil
	}, isDryRun(options.DryRun))
	switch {
	case err == nil:
		if pendingFinalizers || lastGraceful > 0 {
			return nil, false, false, out, lastExisting
		}
		// Graceful deletion with a zero grace period: delete now, and
		// tolerate whoever deletes it first.
		return nil, true, true, out, lastExisting
	case errors.Is(err, errDeleteNow):
		return nil, false, true, out, lastExisting
	case errors.Is(err, errAlreadyDeleting):
		out, err = e.finalizeDelete(ctx, in)
		return err, false, false, out, lastExisting
	default:
		return interpretUpdateError(err, e.qualifiedResource(ctx), name), false, false, out, lastExisting
	}
}

// markAsDeleting sets deletionTimestamp (never later than it was) and a
// zero grace period, bumping the generation the first time.
func markAsDeleting(m metav1.Object, now time.Time) {
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	if ts := m.GetDeletionTimestamp(); ts == nil || ts.After(now) {
		t := metav1.NewTime(now)
		m.SetDeletionTimestamp(&t)
	}
	m.SetDeletionGracePeriodSeconds(ptr(int64(0)))
}

// deletionFinalizers returns the finalizers the propagation policy gives
// the object, and whether they differ (as sets) from its current ones.
func (e *Store) deletionFinalizers(ctx context.Context, m metav1.Object, options *metav1.DeleteOptions) (bool, []string) {
	orphan := e.shouldOrphanDependents(ctx, m, options)
	foreground := e.shouldDeleteDependents(ctx, m, options)
	var finalizers []string
	for _, f := range m.GetFinalizers() {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			finalizers = append(finalizers, f)
		}
	}
	if orphan {
		finalizers = append(finalizers, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		finalizers = append(finalizers, metav1.FinalizerDeleteDependents)
	}
	if sameSet(m.GetFinalizers(), finalizers) {
		return false, m.GetFinalizers()
	}
	return true, finalizers
}

func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

func (e *Store) gcPolicy(ctx context.Context) GarbageCollectionPolicy {
	if g, ok := e.DeleteStrategy.(GarbageCollectionDeleteStrategy); ok {
		return g.DefaultGarbageCollectionPolicy(ctx)
	}
	return DeleteDependents
}

// shouldOrphanDependents: options first (orphanDependents, then
// propagationPolicy), then the object's finalizers, then the default.
func (e *Store) shouldOrphanDependents(ctx context.Context, m metav1.Object, options *metav1.DeleteOptions) bool {
	policy := e.gcPolicy(ctx)
	if policy == Unsupported {
		return false
	}
	//nolint:staticcheck // the legacy field still works, as in kube
	if options.OrphanDependents != nil {
		return *options.OrphanDependents //nolint:staticcheck
	}
	if p := options.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			return false
		}
	}
	for _, f := range m.GetFinalizers() {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true
		case metav1.FinalizerDeleteDependents:
			return false
		}
	}
	return policy == OrphanDependents
}

// shouldDeleteDependents: whether the foregroundDeletion finalizer is set.
func (e *Store) shouldDeleteDependents(ctx context.Context, m metav1.Object, options *metav1.DeleteOptions) bool {
	if e.gcPolicy(ctx) == Unsupported {
		return false
	}
	if options.OrphanDependents != nil { //nolint:staticcheck
		return false
	}
	if p := options.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationForeground:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
			return false
		}
	}
	for _, f := range m.GetFinalizers() {
		switch f {
		case metav1.FinalizerDeleteDependents:
			return true
		case metav1.FinalizerOrphanDependents:
			return false
		}
	}
	return false
}

// finalizeDelete returns what a delete answers: the object if
// ReturnDeletedObject, else a Status Success naming it (its details carry
// the resource in Kind, as kube's).
func (e *Store) finalizeDelete(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	if e.ReturnDeletedObject {
		return obj, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	qr := e.qualifiedResource(ctx)
	return &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  m.GetName(),
			Group: qr.Group,
			Kind:  qr.Resource,
			UID:   m.GetUID(),
		},
	}, nil
}

func ptr[T any](v T) *T { return &v }

// DeleteCorrupt implements rest.CorruptObjectDeleter: kube-apiserver's
// unsafe deletion of an object that cannot be read (k8s.io/apiserver
// registry/generic/registry corruptObjectDeleter, v1.37.2). The storage
// deletes the object only if it cannot be decoded; no precondition,
// admission, finalizer or graceful deletion applies, and nothing is
// returned (the handler answers Status Success). A dry run checks the same
// and deletes nothing. An object that decodes is a 409 Conflict naming
// its storage key; a missing one 404.
func (e *Store) DeleteCorrupt(ctx context.Context, name string, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	cd, ok := e.Storage.(storage.CorruptDeleter)
	if !ok {
		return nil, false, apierrors.NewInternalError(storage.ErrNoCorruptDeleter)
	}
	dryRun := options != nil && isDryRun(options.DryRun)
	if err := cd.DeleteCorrupt(ctx, key, dryRun); err != nil {
		qr := e.qualifiedResource(ctx)
		var decodable *storage.DecodableError
		switch {
		case errors.As(err, &decodable):
			return nil, false, apierrors.NewConflict(qr, name, err)
		case errors.Is(err, storage.ErrNoCorruptDeleter):
			return nil, false, apierrors.NewInternalError(err)
		}
		return nil, false, interpret(err, qr, name, "delete")
	}
	if e.Logger != nil {
		e.Logger.InfoContext(ctx, "unsafe deletion of a corrupt object", "resource", e.qualifiedResource(ctx).String(), "key", key, "dryRun", dryRun)
	}
	return nil, true, nil
}

// DeletesCorruptObjects implements rest.CorruptObjectDeleter: a generic
// store offers unsafe deletion, as upstream's.
func (e *Store) DeletesCorruptObjects() bool { return true }
