package handlers

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// watchListEnabled: kapi serves watch-list (sendInitialEvents), as
// kube-apiserver does by default since 1.34 (feature WatchList).
const watchListEnabled = true

// ListResource serves GET of a collection: a list, or a watch when the
// RequestInfo's verb is "watch" (`?watch=` as request.WatchRequested
// decides, or the legacy /watch/ path), also for one object
// (`/watch/.../name`, turned into a metadata.name field selector). The
// verb alone decides, so the handler streams exactly what authorization,
// audit, max-in-flight and the timeout saw. lister or watcher may be nil when the
// storage does not implement them (405 MethodNotSupported for a watch).
func ListResource(lister rest.Lister, watcher rest.Watcher, s *RequestScope) http.Handler {
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
		opts, err := s.listOptions(req, info)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if opts.Watch {
			if watcher == nil {
				s.err(apierrors.NewMethodNotSupported(s.Resource.GroupResource(), "watch"), w, req)
				return
			}
			if err := s.serveWatch(ctx, w, req, watcher, opts, o); err != nil {
				s.err(err, w, req)
			}
			return
		}
		if lister == nil {
			s.err(apierrors.NewMethodNotSupported(s.Resource.GroupResource(), "list"), w, req)
			return
		}
		var items *cacheable.Items
		listCtx := ctx
		if s.sharedListWanted(ctx, req, o) {
			listCtx, items = cacheable.WithItems(ctx)
		}
		result, err := lister.List(listCtx, opts)
		if err != nil {
			s.err(err, w, req)
			return
		}
		s.writeList(ctx, w, req, o, result, items)
	})
}

// listOptions decodes and validates list/watch query parameters as
// upstream does: 400 for undecodable values, 422 (ListOptions invalid) for
// inconsistent ones; field selector labels go through the scheme's field
// label conversion; a name in the path becomes a metadata.name selector.
func (s *RequestScope) listOptions(req *http.Request, info *request.RequestInfo) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := s.decodeParameters(req, opts); err != nil {
		return nil, err
	}
	// The query's `watch` was decoded with the rule request.WatchRequested
	// follows too; the verb is authoritative all the same.
	opts.Watch = info.Verb == "watch"
	metainternalversion.SetListOptionsDefaults(opts, watchListEnabled)
	if errs := metainternalversionvalidation.ValidateListOptions(opts, watchListEnabled); len(errs) > 0 {
		return nil, invalidOptions("ListOptions", "", errs)
	}
	if opts.FieldSelector != nil {
		sel, err := opts.FieldSelector.Transform(func(label, value string) (string, string, error) {
			return s.Convertor.ConvertFieldLabel(s.Kind, label, value)
		})
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		opts.FieldSelector = sel
	}
	if name := info.PathName(); name != "" {
		if opts.FieldSelector != nil && !opts.FieldSelector.Empty() {
			selected, ok := opts.FieldSelector.RequiresExactMatch("metadata.name")
			if !ok || selected != name {
				return nil, apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
			}
		} else {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name)
		}
	}
	return opts, nil
}
