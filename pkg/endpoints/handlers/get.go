package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// negotiate negotiates the response media type for this scope (Table and
// PartialObjectMetadata allowed).
func (s *RequestScope) negotiate(req *http.Request) (mediaTypeOptions, error) {
	o, _, err := negotiateOutput(req, s.Serializer, s)
	return o, err
}

// GetResource serves GET of one object: 200 with the object, in the
// negotiated media type (or as a Table / PartialObjectMetadata).
// Query: resourceVersion (metav1.GetOptions); `export` is refused as
// upstream does.
func GetResource(r rest.Getter, s *RequestScope) http.Handler {
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
		opts := &metav1.GetOptions{}
		if q := query(req); len(q["export"]) > 0 && q.Get("export") != "" {
			export, err := strconv.ParseBool(q.Get("export"))
			if err != nil {
				s.err(apierrors.NewBadRequest(fmt.Sprintf("the export parameter cannot be parsed: %v", err)), w, req)
				return
			}
			if export {
				s.err(apierrors.NewBadRequest("the export parameter, deprecated since v1.14, is no longer supported"), w, req)
				return
			}
		}
		if err := s.decodeParameters(req, opts); err != nil {
			s.err(err, w, req)
			return
		}
		var item *cacheable.Item
		getCtx := ctx
		if s.sharedGetWanted(ctx, req, o) {
			getCtx, item = cacheable.WithItem(ctx)
		}
		result, err := r.Get(getCtx, info.Name, opts)
		if err != nil {
			s.err(err, w, req)
			return
		}
		s.writeGet(ctx, w, req, o, result, item)
	})
}
