package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// deleteOptionsInternalGVK is the kind and version a request's DeleteOptions
// are audited under (see deleteOptions).
var deleteOptionsInternalGVK = schema.GroupVersionKind{Group: metav1.GroupName, Version: runtime.APIVersionInternal, Kind: "DeleteOptions"}

// deleteOptions reads DeleteOptions from the body (JSON, YAML or protobuf,
// any group-version's DeleteOptions or meta.k8s.io/v1's) or, without a
// body, from the query; then validates them (422 DeleteOptions invalid:
// propagationPolicy, dryRun, ...).
func (s *RequestScope) deleteOptions(req *http.Request, verb metrics.BodyVerb) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := s.readBody(req, verb)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		in, err := negotiateInput(req, s.Serializer)
		if err != nil {
			return nil, err
		}
		defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := in.Serializer.Decode(body, &defaultGVK, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != opts {
			return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
		// Recorded, whatever group-version the client sent (v1,
		// meta.k8s.io/v1 or none), as kube-apiserver records it: its
		// decoder converts the body to meta.k8s.io's internal version and
		// audits the object under that version, so the event reads
		// {"kind":"DeleteOptions","apiVersion":"meta.k8s.io/__internal",...}
		// (checked against kube-apiserver v1.37.2). Encoded as plain JSON:
		// the resource's codecs do not know that group-version.
		logged := opts.DeepCopy()
		logged.SetGroupVersionKind(deleteOptionsInternalGVK)
		audit.LogRequestObject(req.Context(), logged, metav1.SchemeGroupVersion, s.Resource, s.Subresource, nil)
	} else if err := s.decodeParameters(req, opts); err != nil {
		return nil, err
	}
	if errs := validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, invalidOptions("DeleteOptions", "", errs)
	}
	opts.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("DeleteOptions"))
	return opts, nil
}

// DeleteResource serves DELETE of one object. The answer is what the
// storage returns (the deleted object, or the object marked for deletion)
// with 200, or, when it returns nothing, a Status Success with details
// {name, kind}. As upstream, 202 only when the object was not deleted at
// once and the client set orphanDependents=false.
func DeleteResource(r rest.GracefulDeleter, s *RequestScope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, _, err := s.requestInfo(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if info.Name == "" {
			s.err(errEmptyName, w, req)
			return
		}
		o, err := s.negotiate(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		opts, err := s.deleteOptions(req, metrics.BodyDelete)
		if err != nil {
			s.err(err, w, req)
			return
		}
		var result runtime.Object
		var deleted bool
		if ptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
			result, deleted, err = s.deleteCorrupt(ctx, r, info, opts)
		} else {
			result, deleted, err = r.Delete(ctx, info.Name, s.deleteValidation(info.Name, opts), opts)
		}
		if err != nil {
			s.err(err, w, req)
			return
		}
		code := http.StatusOK
		//nolint:staticcheck // OrphanDependents is deprecated; upstream still honours it here.
		if !deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents {
			code = http.StatusAccepted
		}
		if result == nil {
			result = &metav1.Status{
				Status:  metav1.StatusSuccess,
				Code:    int32(code),
				Details: &metav1.StatusDetails{Name: info.Name, Kind: s.Kind.Kind},
			}
		}
		s.writeResponse(ctx, w, req, code, o, result)
	})
}

// DeleteCollectionResource serves DELETE of a collection: the objects
// selected by the list options (labelSelector, fieldSelector, ...) are
// deleted with the DeleteOptions; 200 with what the storage returns (the
// list of deleted objects) or a Status Success.
func DeleteCollectionResource(r rest.CollectionDeleter, s *RequestScope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, _, err := s.requestInfo(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		o, err := s.negotiate(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		listOpts, err := s.listOptions(req, info)
		if err != nil {
			s.err(err, w, req)
			return
		}
		opts, err := s.deleteOptions(req, metrics.BodyDeleteCollection)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if ptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
			// As upstream (AllowUnsafeMalformedObjectDeletion on).
			s.err(invalidOptions("DeleteOptions", "", field.ErrorList{field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"),
				true, "is not allowed with DELETECOLLECTION, try again after removing the option")}), w, req)
			return
		}
		result, err := r.DeleteCollection(ctx, s.deleteValidation("", opts), opts, listOpts)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if result == nil {
			result = &metav1.Status{Status: metav1.StatusSuccess}
		}
		s.writeResponse(ctx, w, req, http.StatusOK, o, result)
	})
}

// unsafeDeleteVerb is the verb a user needs, besides delete, to delete an
// object with ignoreStoreReadErrorWithClusterBreakingPotential.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// deleteCorrupt serves a DELETE with ignoreStoreReadErrorWithClusterBreakingPotential
// as kube-apiserver v1.37.2 (AllowUnsafeMalformedObjectDeletion, beta, on
// by default; k8s.io/apiserver endpoints/handlers/delete.go): the audit
// event is annotated apiserver.k8s.io/unsafe-delete-ignore-read-error; a
// resource that cannot is a 500; the user must also be allowed the verb
// unsafe-delete-ignore-read-errors on the object (403 "not permitted to
// do ..." otherwise; never on a subresource); then the object is deleted
// only if it cannot be read, without admission (rest.CorruptObjectDeleter).
func (s *RequestScope) deleteCorrupt(ctx context.Context, r rest.GracefulDeleter, info *request.RequestInfo, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	audit.AddAnnotation(ctx, "apiserver.k8s.io/unsafe-delete-ignore-read-error", "")
	cd, ok := r.(rest.CorruptObjectDeleter)
	if !ok || !cd.DeletesCorruptObjects() {
		return nil, false, apierrors.NewInternalError(errors.New("no unsafe deleter provided, can not honor ignoreStoreReadErrorWithClusterBreakingPotential"))
	}
	gr := s.Resource.GroupResource()
	if !info.IsResourceRequest || s.Subresource != "" {
		return nil, false, apierrors.NewForbidden(gr, info.Name,
			errors.New("ignoreStoreReadErrorWithClusterBreakingPotential delete option is not allowed on a subresource or non-resource request"))
	}
	if az, ok := request.AuthorizerFrom(ctx); ok {
		u, _ := request.UserFrom(ctx)
		attrs := authorizer.Attributes{
			User: u, Verb: unsafeDeleteVerb, ResourceRequest: true,
			APIGroup: s.Resource.Group, APIVersion: s.Resource.Version, Resource: s.Resource.Resource,
			Namespace: request.NamespaceFrom(ctx), Name: info.Name,
		}
		decision, reason, err := az.Authorize(ctx, attrs)
		switch {
		case err != nil:
			return nil, false, apierrors.NewForbidden(gr, info.Name, fmt.Errorf("error while checking permission for %q, %w", unsafeDeleteVerb, err))
		case decision != authorizer.DecisionAllow:
			return nil, false, apierrors.NewForbidden(gr, info.Name, fmt.Errorf("not permitted to do %q, reason: %s", unsafeDeleteVerb, reason))
		}
	}
	return cd.DeleteCorrupt(ctx, info.Name, opts)
}
