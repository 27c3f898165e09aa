package handlers

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// CreateResource serves POST to a collection: 201 with the created object
// (also under dryRun=All, as upstream).
//
// Order of checks, as upstream: 406 (Accept), 415 (Content-Type), 413
// (body over the limit), 400 (undecodable query), 422 CreateOptions
// invalid (dryRun other than All, fieldManager too long or unprintable,
// fieldValidation unknown), 400 (undecodable body, strict errors under
// fieldValidation=Strict, wrong apiVersion), 400 (fields the schema does
// not declare, under Strict: see UnknownFieldPruner), 400 (namespace of
// the object differs from the request's). System metadata (uid, creationTimestamp,
// deletionTimestamp, deletionGracePeriodSeconds, selfLink) sent by the
// client is wiped.
func CreateResource(r rest.Creater, s *RequestScope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, ns, err := s.requestInfo(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		// Admission names a subresource's create (serviceaccounts/token,
		// pods/eviction, pods/binding) after the object in the path, as
		// upstream's create handler; other creates after the new object.
		name := info.PathName()
		o, err := s.negotiate(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		in, err := negotiateInput(req, s.Serializer)
		if err != nil {
			s.err(err, w, req)
			return
		}
		body, err := s.readBody(req, metrics.BodyCreate)
		if err != nil {
			s.err(err, w, req)
			return
		}
		opts := &metav1.CreateOptions{}
		if err := s.decodeParameters(req, opts); err != nil {
			s.err(err, w, req)
			return
		}
		if errs := validation.ValidateCreateOptions(opts); len(errs) > 0 {
			s.err(invalidOptions("CreateOptions", "", errs), w, req)
			return
		}
		opts.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("CreateOptions"))

		obj, err := s.decodeBody(ctx, in, body, r.New(), opts.FieldValidation)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if err := s.pruneUnknownFields(ctx, obj, opts.FieldValidation); err != nil {
			s.err(err, w, req)
			return
		}
		if m, err := meta.Accessor(obj); err == nil {
			wipeObjectMetaSystemFields(m)
			if err := ensureNamespace(s.expectedNamespace(ns), m); err != nil {
				s.err(err, w, req)
				return
			}
		}
		if s.FieldManager != nil {
			// As upstream, a create is recorded as an Update by the
			// manager, against an empty live object.
			if err := guard(s.logger(), "tracking managed fields", func() error {
				obj = s.createManagedFields(ctx, r.New(), obj, managerOrUserAgent(opts.FieldManager, req))
				return nil
			}); err != nil {
				s.err(err, w, req)
				return
			}
		}
		if err := deadlineExceeded(ctx); err != nil {
			s.err(err, w, req)
			return
		}
		if err := s.admitCreate(ctx, name, obj, opts); err != nil {
			s.err(err, w, req)
			return
		}
		result, err := r.Create(ctx, obj, s.createValidation(name, opts, opts.DryRun), opts)
		if err != nil {
			s.err(err, w, req)
			return
		}
		code := http.StatusCreated
		if st, ok := result.(*metav1.Status); ok && st.Code == 0 {
			st.Code = int32(code)
		}
		s.writeResponse(ctx, w, req, code, o, result)
	})
}
