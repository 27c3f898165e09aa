package handlers

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// attributes describes the write of req for admission.
func (s *RequestScope) attributes(ctx context.Context, op admission.Operation, name string, opts runtime.Object, dryRun []string, obj, old runtime.Object) admission.Attributes {
	u, _ := request.UserFrom(ctx)
	return admission.Attributes{
		Operation:   op,
		Resource:    s.Resource,
		Subresource: s.Subresource,
		Kind:        s.Kind,
		Namespace:   request.NamespaceFrom(ctx),
		Name:        name,
		Object:      obj,
		OldObject:   old,
		User:        u,
		DryRun:      len(dryRun) > 0,
		Options:     opts,
	}
}

// nameOf is name, or the object's own name when name is empty (a create,
// or an item of a collection delete).
func nameOf(name string, obj runtime.Object) string {
	if name == "" {
		if m, ok := obj.(interface{ GetName() string }); ok {
			return m.GetName()
		}
	}
	return name
}

// admitCreate runs mutating admission on an object about to be created, as
// upstream's create handler does: after defaulting and managed fields,
// before the store prepares and validates it.
func (s *RequestScope) admitCreate(ctx context.Context, name string, obj runtime.Object, opts *metav1.CreateOptions) error {
	if !s.Admission.Mutates(admission.Create) {
		return nil
	}
	return s.Admission.Admit(ctx, s.attributes(ctx, admission.Create, nameOf(name, obj), opts, opts.DryRun, obj, nil))
}

// admittingUpdate runs mutating admission on the object an update
// computes, after the body or patch and managed fields are applied (as
// upstream's admission transformer runs after the field manager's), on
// every attempt; an update of a missing object is admitted as a create.
type admittingUpdate struct {
	rest.UpdatedObjectInfo
	scope *RequestScope
	name  string
	opts  *metav1.UpdateOptions
}

func (s *RequestScope) admitUpdate(info rest.UpdatedObjectInfo, name string, opts *metav1.UpdateOptions) rest.UpdatedObjectInfo {
	if !s.Admission.Mutates(admission.Create) && !s.Admission.Mutates(admission.Update) {
		return info
	}
	return &admittingUpdate{UpdatedObjectInfo: info, scope: s, name: name, opts: opts}
}

func (u *admittingUpdate) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	op := admission.Update
	var opts runtime.Object = u.opts
	if !exists(old) {
		op, old, opts = admission.Create, nil, updateToCreateOptions(u.opts)
	}
	if !u.scope.Admission.Mutates(op) {
		return obj, nil
	}
	if err := u.scope.Admission.Admit(ctx, u.scope.attributes(ctx, op, u.name, opts, u.opts.DryRun, obj, old)); err != nil {
		return nil, err
	}
	return obj, nil
}

// createValidation runs validating admission on the object about to be
// created; the store calls it after defaulting and before writing.
func (s *RequestScope) createValidation(name string, opts runtime.Object, dryRun []string) rest.ValidateObjectFunc {
	if !s.Admission.Handles(admission.Create) {
		return rest.ValidateAllObjectFunc
	}
	return func(ctx context.Context, obj runtime.Object) error {
		return s.Admission.Validate(ctx, s.attributes(ctx, admission.Create, nameOf(name, obj), opts, dryRun, obj, nil))
	}
}

// updateValidation runs validating admission on an update (or on the
// create an update may turn into). The context it returns is ctx for the
// Update call, telling storage whether a validating plugin reads the
// update's objects (rest.WithUpdateObjectsRead): when none does, storage
// validates without copying them; and where it records its managed fields
// timestamps comparison (rest.WithTimestampComparisons).
func (s *RequestScope) updateValidation(ctx context.Context, name string, opts *metav1.UpdateOptions) (context.Context, rest.ValidateObjectFunc, rest.ValidateObjectUpdateFunc) {
	uctx := rest.WithUpdateObjectsRead(ctx, func() bool {
		return s.Admission.ValidationReadsObjects(s.attributes(ctx, admission.Update, name, opts, opts.DryRun, nil, nil))
	})
	if s.Metrics != nil {
		uctx = rest.WithTimestampComparisons(uctx, s.Metrics.TimestampComparison)
		uctx = rest.WithDuplicateValidationErrors(uctx, s.Metrics.DuplicateValidationErrors)
	}
	update := rest.ValidateAllObjectUpdateFunc
	if s.Admission.Handles(admission.Update) {
		update = func(ctx context.Context, obj, old runtime.Object) error {
			return s.Admission.Validate(ctx, s.attributes(ctx, admission.Update, name, opts, opts.DryRun, obj, old))
		}
	}
	create := &lazyCreateValidation{build: func() rest.ValidateObjectFunc {
		return s.authorizeCreate(name, s.createValidation(name, updateToCreateOptions(opts), opts.DryRun))
	}}
	return uctx, create.validate, update
}

// lazyCreateValidation builds the validation of the create an update may
// turn into on its first use, once per request: most updates are of an
// object that exists and never use it.
type lazyCreateValidation struct {
	once  sync.Once
	build func() rest.ValidateObjectFunc
	f     rest.ValidateObjectFunc
}

func (l *lazyCreateValidation) validate(ctx context.Context, obj runtime.Object) error {
	l.once.Do(func() { l.f = l.build() })
	return l.f(ctx, obj)
}

// updateToCreateOptions are the options admission sees for the create an
// update or patch turns into, as upstream's updateToCreateOptions and
// patchToCreateOptions: CreateOptions with the same dry run, field manager
// and field validation.
func updateToCreateOptions(uo *metav1.UpdateOptions) *metav1.CreateOptions {
	if uo == nil {
		return nil
	}
	co := &metav1.CreateOptions{DryRun: uo.DryRun, FieldManager: uo.FieldManager, FieldValidation: uo.FieldValidation}
	co.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("CreateOptions"))
	return co
}

// authorizeCreate makes the create that an update or patch turns into
// (create on update, server-side apply of a new object) ask the
// authorizer for "create" on the object first, once per request, as
// upstream's withAuthorization (k8s.io/apiserver endpoints/handlers
// update.go, patch.go, v1.37.2): after mutating admission, before
// validating admission; a refusal is the 403 naming the object, an
// authorizer error without allow a 500. A request no authorization filter
// allowed (a server without authorization) is not checked.
func (s *RequestScope) authorizeCreate(name string, validate rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	var once sync.Once
	var decision authorizer.Decision
	var reason string
	var err error
	return func(ctx context.Context, obj runtime.Object) error {
		az, ok := request.AuthorizerFrom(ctx)
		if !ok {
			return validate(ctx, obj)
		}
		u, _ := request.UserFrom(ctx)
		attrs := authorizer.Attributes{
			User: u, Verb: "create", ResourceRequest: true,
			APIGroup: s.Resource.Group, APIVersion: s.Resource.Version, Resource: s.Resource.Resource,
			Subresource: s.Subresource, Namespace: request.NamespaceFrom(ctx), Name: name,
		}
		if info, ok := request.RequestInfoFrom(ctx); ok {
			attrs.Path = info.Path
		}
		once.Do(func() { decision, reason, err = az.Authorize(ctx, attrs) })
		switch {
		case decision == authorizer.DecisionAllow:
			return validate(ctx, obj)
		case err != nil:
			return apierrors.NewInternalError(err)
		}
		return &apierrors.StatusError{ErrStatus: *authorizer.ForbiddenStatus(attrs, reason)}
	}
}

// deleteValidation runs admission on the object about to be deleted,
// mutating then validating, both with a copy of it as the old object, as
// upstream's AdmissionToValidateObjectDeleteFunc (k8s.io/apiserver
// registry/rest/delete.go, v1.37.2; the mutating phase moved there from
// the handler). name is the request's: "" for the items of a collection
// delete, which upstream's reviews carry no name for.
func (s *RequestScope) deleteValidation(name string, opts *metav1.DeleteOptions) rest.ValidateObjectFunc {
	mutating, validating := s.Admission.Mutates(admission.Delete), s.Admission.Handles(admission.Delete)
	if !mutating && !validating {
		return rest.ValidateAllObjectFunc
	}
	return func(ctx context.Context, obj runtime.Object) error {
		a := s.attributes(ctx, admission.Delete, name, opts, opts.DryRun, nil, obj.DeepCopyObject())
		if mutating {
			if err := s.Admission.Admit(ctx, a); err != nil {
				return err
			}
		}
		if validating {
			return s.Admission.Validate(ctx, a)
		}
		return nil
	}
}

// exists reports whether old, the current object an update starts from,
// is stored: the store passes an empty object (no resourceVersion) when it
// is not, as upstream's isNotZeroObject checks.
func exists(old runtime.Object) bool {
	if old == nil {
		return false
	}
	m, err := meta.Accessor(old)
	return err != nil || m.GetResourceVersion() != ""
}
