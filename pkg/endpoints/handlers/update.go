package handlers

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// UpdateResource serves PUT of one object: 200 with the stored object, or
// 201 when the storage created it. The name (and namespace, when set) in
// the body must match the URL's: 400 `the name of the object (a) does not
// match the name on the URL (b)`. Checks otherwise as CreateResource, with
// UpdateOptions.
func UpdateResource(r rest.Updater, s *RequestScope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, ns, err := s.requestInfo(req)
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
		body, err := s.readBody(req, metrics.BodyUpdate)
		if err != nil {
			s.err(err, w, req)
			return
		}
		opts := &metav1.UpdateOptions{}
		if err := s.decodeParameters(req, opts); err != nil {
			s.err(err, w, req)
			return
		}
		if errs := validation.ValidateUpdateOptions(opts); len(errs) > 0 {
			s.err(invalidOptions("UpdateOptions", "", errs), w, req)
			return
		}
		opts.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("UpdateOptions"))
		in, err := negotiateInput(req, s.Serializer)
		if err != nil {
			s.err(err, w, req)
			return
		}
		obj, err := s.decodeBody(ctx, in, body, r.New(), opts.FieldValidation)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if err := s.pruneUnknownFields(ctx, obj, opts.FieldValidation); err != nil {
			s.err(err, w, req)
			return
		}
		if err := checkName(obj, info.Name, ns); err != nil {
			s.err(err, w, req)
			return
		}
		if m, err := meta.Accessor(obj); err == nil {
			if err := ensureNamespace(s.expectedNamespace(ns), m); err != nil {
				s.err(err, w, req)
				return
			}
		}
		if err := deadlineExceeded(ctx); err != nil {
			s.err(err, w, req)
			return
		}
		// A retry starts from the body as decoded, not as the attempt before
		// changed it: decoded again, without the warnings and the audit of
		// the first decode (recorded once).
		again := func() (runtime.Object, error) {
			quiet := context.Background()
			obj, err := s.decodeBody(quiet, in, body, r.New(), opts.FieldValidation)
			if err != nil {
				return nil, err
			}
			if err := s.pruneUnknownFields(quiet, obj, opts.FieldValidation); err != nil {
				return nil, err
			}
			if m, err := meta.Accessor(obj); err == nil {
				if err := ensureNamespace(s.expectedNamespace(ns), m); err != nil {
					return nil, err
				}
			}
			return obj, nil
		}
		objInfo := newUpdatedObject(obj, again, s, managerOrUserAgent(opts.FieldManager, req), r.New)
		uctx, createValidation, updateValidation := s.updateValidation(ctx, info.Name, opts)
		result, created, err := r.Update(uctx, info.Name, s.admitUpdate(objInfo, info.Name, opts), createValidation, updateValidation, false, opts)
		if err != nil {
			s.err(err, w, req)
			return
		}
		code := http.StatusOK
		if created {
			code = http.StatusCreated
		}
		s.writeResponse(ctx, w, req, code, o, result)
	})
}

// updatedObject is the UpdatedObjectInfo of a PUT: the body, copied for
// each attempt, with the UID it carries as precondition. The first
// attempt takes the decoded body itself (an attempt changes the object it
// is given: managed fields, admission, the store's preparation); later
// ones (a conflict retried) take the body decoded again by again, as
// upstream's deep copy per attempt would give them. Attempts run one
// after the other.
type updatedObject struct {
	obj      runtime.Object // nil once handed to the first attempt
	again    func() (runtime.Object, error)
	pre      *metav1.Preconditions
	scope    *RequestScope
	manager  string
	newEmpty func() runtime.Object
}

func newUpdatedObject(obj runtime.Object, again func() (runtime.Object, error), s *RequestScope, manager string, newEmpty func() runtime.Object) *updatedObject {
	u := &updatedObject{obj: obj, again: again, scope: s, manager: manager, newEmpty: newEmpty}
	if m, err := meta.Accessor(obj); err == nil && m.GetUID() != "" {
		uid := m.GetUID()
		u.pre = &metav1.Preconditions{UID: &uid}
	}
	return u
}

func (u *updatedObject) Preconditions() *metav1.Preconditions { return u.pre }

func (u *updatedObject) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	if err := deadlineExceeded(ctx); err != nil {
		return nil, err
	}
	newObj := u.obj
	if newObj != nil {
		u.obj = nil
	} else {
		var err error
		if newObj, err = u.again(); err != nil {
			return nil, err
		}
	}
	if u.scope.FieldManager != nil {
		live := oldObj
		if live == nil {
			live = u.newEmpty()
		}
		if err := guard(u.scope.logger(), "tracking managed fields", func() error {
			newObj = u.scope.FieldManager.UpdateNoErrors(live, newObj, u.manager)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return newObj, nil
}
