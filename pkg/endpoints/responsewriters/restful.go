package responsewriters

import (
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Route-level checks of kube-apiserver's go-restful container.
//
// kube-apiserver serves its built-in groups' routes, /api and /version
// through go-restful, which picks a route by path, then method (405), then
// Content-Type against the route's Consumes (415), then Accept against its
// Produces (406), and only then runs the handler. Its errors become a
// Status whose message is go-restful's own (k8s.io/apiserver v0.37.2
// pkg/server/handler.go serviceErrorHandler; go-restful v3 jsr311.go
// detectRoute, route.go matchesContentType and matchesAccept). Custom
// resources, /apis and /apis/<group> are served by plain handlers and
// answer with the handlers' own negotiation errors instead.

// RestfulConsumes is go-restful's Route.matchesContentType: one of the
// comma-separated types of the Content-Type, parameters cut, equal to one
// consumed; a request without Content-Type counts as
// application/octet-stream but for GET, HEAD, OPTIONS, DELETE and TRACE.
func RestfulConsumes(req *http.Request, consumes []string) bool {
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodDelete, http.MethodTrace:
			return true
		}
		ct = "application/octet-stream"
	}
	return anyMediaType(ct, func(mt string) bool { return slices.Contains(consumes, mt) })
}

// RestfulAccepts is go-restful's Route.matchesAccept: an empty Accept or
// */* takes anything; otherwise one of the comma-separated types,
// parameters (q included) cut, must equal one produced. application/* is
// no wildcard there.
func RestfulAccepts(accept string, produces []string) bool {
	if accept == "" {
		return true
	}
	return anyMediaType(accept, func(mt string) bool { return mt == "*/*" || slices.Contains(produces, mt) })
}

func anyMediaType(header string, match func(string) bool) bool {
	for part := range strings.SplitSeq(header, ",") {
		mt, _, _ := strings.Cut(part, ";")
		if match(strings.TrimSpace(mt)) {
			return true
		}
	}
	return false
}

// RestfulNotAcceptable is kube-apiserver's 406 for a request go-restful
// finds no producible type for.
func RestfulNotAcceptable(produces []string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "",
		"406: Not Acceptable\n\nAvailable representations: "+strings.Join(produces, ", "), 0, false)
}

// RestfulUnsupportedMediaType is kube-apiserver's 415 for a request body
// go-restful's route does not consume.
func RestfulUnsupportedMediaType() error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "", "415: Unsupported Media Type", 0, false)
}
