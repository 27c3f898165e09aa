package handlers

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// attributes describes the write of req for admission.
func (s *RequestScope) attributes(ctx context.Context, req *http.Request, op admission.Operation, name string, dryRun []string, obj, old runtime.Object) admission.Attributes {
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
	}
}

// createValidation runs admission on the object about to be created; the
// store calls it after defaulting and before writing.
func (s *RequestScope) createValidation(req *http.Request, name string, dryRun []string) rest.ValidateObjectFunc {
	if !s.Admission.Handles(admission.Create) {
		return rest.ValidateAllObjectFunc
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if name == "" {
			if m, ok := obj.(interface{ GetName() string }); ok {
				name = m.GetName()
			}
		}
		return s.Admission.Validate(ctx, s.attributes(ctx, req, admission.Create, name, dryRun, obj, nil))
	}
}

// updateValidation runs admission on an update (or on the create an
// update may turn into).
func (s *RequestScope) updateValidation(req *http.Request, name string, dryRun []string) (rest.ValidateObjectFunc, rest.ValidateObjectUpdateFunc) {
	update := rest.ValidateAllObjectUpdateFunc
	if s.Admission.Handles(admission.Update) {
		update = func(ctx context.Context, obj, old runtime.Object) error {
			return s.Admission.Validate(ctx, s.attributes(ctx, req, admission.Update, name, dryRun, obj, old))
		}
	}
	return s.createValidation(req, name, dryRun), update
}

// deleteValidation runs admission on the object about to be deleted.
func (s *RequestScope) deleteValidation(req *http.Request, name string, dryRun []string) rest.ValidateObjectFunc {
	if !s.Admission.Handles(admission.Delete) {
		return rest.ValidateAllObjectFunc
	}
	return func(ctx context.Context, obj runtime.Object) error {
		n := name
		if n == "" {
			if m, ok := obj.(interface{ GetName() string }); ok {
				n = m.GetName()
			}
		}
		return s.Admission.Validate(ctx, s.attributes(ctx, req, admission.Delete, n, dryRun, nil, obj))
	}
}
