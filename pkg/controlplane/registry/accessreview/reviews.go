package accessreview

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// orInterim is authz, or the interim authorizer when authz is nil.
func orInterim(authz authorizer.Authorizer) authorizer.Authorizer {
	if authz == nil {
		return interim.Authorizer{}
	}
	return authz
}

// runCreateValidation runs admission's validation on a copy, as upstream.
func runCreateValidation(ctx context.Context, obj runtime.Object, v rest.ValidateObjectFunc) error {
	if v == nil {
		return nil
	}
	return v(ctx, obj.DeepCopyObject())
}

// SubjectAccessReviewREST answers subjectaccessreviews: may the user of the
// spec do what the spec describes?
type SubjectAccessReviewREST struct{ authz authorizer.Authorizer }

// NewSubjectAccessReviewREST decides with authz (nil: the interim authorizer).
func NewSubjectAccessReviewREST(authz authorizer.Authorizer) *SubjectAccessReviewREST {
	return &SubjectAccessReviewREST{authz: orInterim(authz)}
}

var (
	_ rest.Creater              = (*SubjectAccessReviewREST)(nil)
	_ rest.Scoper               = (*SubjectAccessReviewREST)(nil)
	_ rest.SingularNameProvider = (*SubjectAccessReviewREST)(nil)
)

// New returns an empty SubjectAccessReview.
func (*SubjectAccessReviewREST) New() runtime.Object { return &authorizationv1.SubjectAccessReview{} }

// Destroy does nothing: nothing is held.
func (*SubjectAccessReviewREST) Destroy() {}

// NamespaceScoped is false.
func (*SubjectAccessReviewREST) NamespaceScoped() bool { return false }

// GetSingularName is "subjectaccessreview".
func (*SubjectAccessReviewREST) GetSingularName() string { return "subjectaccessreview" }

// Create validates the review, asks the authorizer and returns the review
// with its status filled in.
func (r *SubjectAccessReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SubjectAccessReview: %T", obj))
	}
	if errs := ValidateSubjectAccessReview(sar); len(errs) > 0 {
		return nil, apierrors.NewInvalid(reviewInvalidKind, "", errs)
	}
	if err := runCreateValidation(ctx, obj, createValidation); err != nil {
		return nil, err
	}
	rv := reviewFrom(subjectFrom(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	sar.Status = rv.status(r.authz.Authorize(ctx, rv.attrs))
	return sar, nil
}

// LocalSubjectAccessReviewREST answers localsubjectaccessreviews: a
// SubjectAccessReview confined to the namespace of the request.
type LocalSubjectAccessReviewREST struct{ authz authorizer.Authorizer }

// NewLocalSubjectAccessReviewREST decides with authz (nil: the
// interim authorizer).
func NewLocalSubjectAccessReviewREST(authz authorizer.Authorizer) *LocalSubjectAccessReviewREST {
	return &LocalSubjectAccessReviewREST{authz: orInterim(authz)}
}

var (
	_ rest.Creater              = (*LocalSubjectAccessReviewREST)(nil)
	_ rest.Scoper               = (*LocalSubjectAccessReviewREST)(nil)
	_ rest.SingularNameProvider = (*LocalSubjectAccessReviewREST)(nil)
)

// New returns an empty LocalSubjectAccessReview.
func (*LocalSubjectAccessReviewREST) New() runtime.Object {
	return &authorizationv1.LocalSubjectAccessReview{}
}

// Destroy does nothing: nothing is held.
func (*LocalSubjectAccessReviewREST) Destroy() {}

// NamespaceScoped is true.
func (*LocalSubjectAccessReviewREST) NamespaceScoped() bool { return true }

// GetSingularName is "localsubjectaccessreview".
func (*LocalSubjectAccessReviewREST) GetSingularName() string { return "localsubjectaccessreview" }

// Create validates the review (its metadata.namespace, which the handler
// defaults to the request's, must equal spec.resourceAttributes.namespace),
// asks the authorizer and returns the review with its status.
func (r *LocalSubjectAccessReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	lsar, ok := obj.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a LocalSubjectAccessReview: %T", obj))
	}
	if errs := ValidateLocalSubjectAccessReview(lsar); len(errs) > 0 {
		return nil, apierrors.NewInvalid(reviewInvalidKind, "", errs)
	}
	ns := request.NamespaceFrom(ctx)
	if ns == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", ns))
	}
	if ns != lsar.Namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", ns))
	}
	if err := runCreateValidation(ctx, obj, createValidation); err != nil {
		return nil, err
	}
	rv := reviewFrom(subjectFrom(lsar.Spec), lsar.Spec.ResourceAttributes, lsar.Spec.NonResourceAttributes)
	lsar.Status = rv.status(r.authz.Authorize(ctx, rv.attrs))
	return lsar, nil
}

// SelfSubjectAccessReviewREST answers selfsubjectaccessreviews: may the
// requesting user do what the spec describes (kubectl auth can-i)?
type SelfSubjectAccessReviewREST struct{ authz authorizer.Authorizer }

// NewSelfSubjectAccessReviewREST decides with authz (nil: the
// interim authorizer).
func NewSelfSubjectAccessReviewREST(authz authorizer.Authorizer) *SelfSubjectAccessReviewREST {
	return &SelfSubjectAccessReviewREST{authz: orInterim(authz)}
}

var (
	_ rest.Creater              = (*SelfSubjectAccessReviewREST)(nil)
	_ rest.Scoper               = (*SelfSubjectAccessReviewREST)(nil)
	_ rest.SingularNameProvider = (*SelfSubjectAccessReviewREST)(nil)
)

// New returns an empty SelfSubjectAccessReview.
func (*SelfSubjectAccessReviewREST) New() runtime.Object {
	return &authorizationv1.SelfSubjectAccessReview{}
}

// Destroy does nothing: nothing is held.
func (*SelfSubjectAccessReviewREST) Destroy() {}

// NamespaceScoped is false.
func (*SelfSubjectAccessReviewREST) NamespaceScoped() bool { return false }

// GetSingularName is "selfsubjectaccessreview".
func (*SelfSubjectAccessReviewREST) GetSingularName() string { return "selfsubjectaccessreview" }

// reviewInvalidKind is the kind of upstream's 422 for an invalid access
// review: its registries name the internal object's kind, which decoding
// left empty (".authorization.k8s.io \"\" is invalid: ...", no kind in
// the details; kube-apiserver v1.37.2).
var reviewInvalidKind = schema.GroupKind{Group: authorizationv1.GroupName}

// Create validates the review, asks the authorizer about the request's
// user and returns the review with its status.
func (r *SelfSubjectAccessReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	ssar, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectAccessReview: %T", obj))
	}
	if errs := ValidateSelfSubjectAccessReview(ssar); len(errs) > 0 {
		return nil, apierrors.NewInvalid(reviewInvalidKind, "", errs)
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if err := runCreateValidation(ctx, obj, createValidation); err != nil {
		return nil, err
	}
	rv := reviewFrom(u, ssar.Spec.ResourceAttributes, ssar.Spec.NonResourceAttributes)
	ssar.Status = rv.status(r.authz.Authorize(ctx, rv.attrs))
	return ssar, nil
}
