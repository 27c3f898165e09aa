package installer

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// restfulRoute answers, before h, what kube-apiserver's go-restful
// container answers for a request the route cannot take (see
// responsewriters.RestfulAccepts): 405 for HEAD, 415 when consumes is set and the
// Content-Type matches none of it, 406 when the Accept names none of
// produces. Upstream's installer gives every route but PATCH (the patch
// types it serves) Consumes */*, and produces the group's media types
// after what the storage produces besides (pods/log: text/plain), a list
// (and a watch) the watch stream media types too, a connect route
// anything.
func restfulRoute(h http.Handler, ns runtime.NegotiatedSerializer, consumes, produces []string) http.Handler {
	if h == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// go-restful matches the method first: its routes are GET, not
		// HEAD, so a HEAD is 405 (kube-apiserver v1.37.2 answers HEAD of a
		// built-in resource so; custom resources, served by verb, 200).
		if req.Method == http.MethodHead {
			handlers.WriteErrorNegotiated(w, req, ns, nil, handlers.NewMethodNotAllowed())
			return
		}
		if consumes != nil && !responsewriters.RestfulConsumes(req, consumes) {
			handlers.WriteErrorNegotiated(w, req, ns, nil, responsewriters.RestfulUnsupportedMediaType())
			return
		}
		if produces != nil && !responsewriters.RestfulAccepts(req.Header.Get("Accept"), produces) {
			handlers.WriteErrorNegotiated(w, req, ns, nil, responsewriters.RestfulNotAcceptable(produces))
			return
		}
		h.ServeHTTP(w, req)
	})
}
