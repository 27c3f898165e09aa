package installer

import (
	"errors"
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// routes are the handlers of one (sub)resource path; nil means the verb is
// not served (405).
type routes struct {
	namespaced  bool
	subresource bool

	// collection: /[namespaces/{ns}/]{resource}
	list, watchList, create, deleteCollection http.Handler
	// item: /[namespaces/{ns}/]{resource}/{name}[/{subresource}]
	get, watch, update, patch, delete http.Handler
	// connect serves a connect subresource (rest.Connecter) for the
	// methods in connectMethods, and the paths below it if
	// connectSubpath.
	connect        http.Handler
	connectMethods map[string]bool
	connectSubpath bool
}

// groupHandler serves every path under one group-version root.
type groupHandler struct {
	root       string
	gv         schema.GroupVersion
	serializer runtime.NegotiatedSerializer
	logger     *slog.Logger
	routes     map[string]*routes // "configmaps", "configmaps/status"
	discovery  *metav1.APIResourceList
	// rootProduces is what the root's GET produces, as go-restful checks
	// it (nil: no check, for PlainRoutes).
	rootProduces []string
	// plain: custom resources' routes (APIGroupVersion.PlainRoutes),
	// picked as upstream's crdHandler picks them (crRoute).
	plain bool
}

func (h *groupHandler) fail(w http.ResponseWriter, req *http.Request, err error) {
	handlers.WriteErrorNegotiated(w, req, h.serializer, h.logger, err)
}

func (h *groupHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	info, ok := request.RequestInfoFrom(req.Context())
	if !ok {
		h.fail(w, req, apierrors.NewInternalError(errors.New("no RequestInfo found in the context")))
		return
	}
	if !info.IsResourceRequest {
		h.serveRoot(w, req)
		return
	}
	handler, err := h.route(info, req.Method)
	if err != nil {
		h.fail(w, req, err)
		return
	}
	handler.ServeHTTP(w, req)
}

// serveRoot answers the root itself with the APIResourceList (GET only);
// anything else below the root that is not a resource path is a 404.
func (h *groupHandler) serveRoot(w http.ResponseWriter, req *http.Request) {
	if p := req.URL.Path; p != h.root && p != h.root+"/" {
		h.fail(w, req, handlers.NewNotFound())
		return
	}
	// A built-in group-version's root is a go-restful GET route upstream
	// (HEAD is 405); a custom resource group-version's takes HEAD too.
	if req.Method != http.MethodGet && (req.Method != http.MethodHead || h.rootProduces != nil) {
		h.fail(w, req, handlers.NewMethodNotAllowed())
		return
	}
	if h.rootProduces != nil && !responsewriters.RestfulAccepts(req.Header.Get("Accept"), h.rootProduces) {
		h.fail(w, req, responsewriters.RestfulNotAcceptable(h.rootProduces))
		return
	}
	// The encoder sets the object's kind and apiVersion while it encodes,
	// so concurrent requests must not share the object: encode a copy.
	handlers.WriteObjectNegotiated(w, req, h.serializer, h.logger, schema.GroupVersion{}, http.StatusOK, h.discovery.DeepCopy())
}

// route picks the handler for a resource request: 404 for a path no
// resource serves (unknown resource or subresource, a namespaced
// resource's item outside a namespace, a cluster-scoped resource under
// /namespaces/{ns}/, extra path segments), 405 for a verb the path does
// not serve.
func (h *groupHandler) route(info *request.RequestInfo, method string) (http.Handler, error) {
	if h.plain {
		return h.crRoute(info)
	}
	key := info.Resource
	if info.Subresource != "" {
		key += "/" + info.Subresource
	}
	r := h.routes[key]
	// Only some connect subresources (pods/{name}/proxy/{path}) serve
	// paths below themselves.
	if r == nil || len(info.Parts) > 3 && !r.connectSubpath {
		return nil, handlers.NewNotFound()
	}
	if r.namespaced {
		if info.Namespace == "" && info.PathName() != "" {
			return nil, handlers.NewNotFound()
		}
	} else if info.Namespace != "" && !(h.gv.Group == "" && info.Resource == "namespaces" && info.Namespace == info.PathName()) {
		// /namespaces/{ns}/{cluster-scoped resource}; /namespaces/{name} itself is fine.
		return nil, handlers.NewNotFound()
	}
	if r.connect != nil {
		if info.PathName() == "" {
			return nil, handlers.NewNotFound()
		}
		if !r.connectMethods[method] {
			return nil, handlers.NewMethodNotAllowed()
		}
		return r.connect, nil
	}
	if r.subresource {
		if info.Verb == "watch" {
			return nil, handlers.NewNotFound()
		}
		return orNotAllowed(r.itemHandler(info.Verb, true))
	}
	if info.PathName() == "" {
		// A namespaced collection outside a namespace only lists and
		// watches (across all namespaces).
		allNamespaces := r.namespaced && info.Namespace == ""
		switch info.Verb {
		case "list":
			return orNotAllowed(r.list)
		case "watch":
			return orNotAllowed(r.watchList)
		case "create":
			if allNamespaces {
				return nil, handlers.NewMethodNotAllowed()
			}
			return orNotAllowed(r.create)
		case "deletecollection":
			if allNamespaces {
				return nil, handlers.NewMethodNotAllowed()
			}
			return orNotAllowed(r.deleteCollection)
		}
		return nil, handlers.NewMethodNotAllowed()
	}
	return orNotAllowed(r.itemHandler(info.Verb, false))
}

// plainNotFound is the end of kube-apiserver's handler chain: what
// upstream's crdHandler delegates to for a path no custom resource serves.
var plainNotFound = http.HandlerFunc(http.NotFound)

// crRoute picks the handler of a custom resource request as upstream's
// crdHandler does (apiextensions-apiserver v0.37.2
// customresource_handler.go ServeHTTP, serveResource, serveStatus,
// serveScale): a resource it does not serve, a namespaced resource
// outside a namespace (but to list or watch) and a cluster-scoped one in
// one fall through to the chain's "404 page not found"; a subresource the
// version does not have is the object's NotFound; then the request's verb
// (not its method) picks the handler: a POST on an object's path is a
// create, a PUT on the collection an update (400, no name), and a verb a
// path does not serve is MethodNotSupported ("delete is not supported on
// resources of kind ...").
func (h *groupHandler) crRoute(info *request.RequestInfo) (http.Handler, error) {
	// The scale subresource is built into a handler of its own, which
	// holds the subresource's routes only.
	r := h.routes[info.Resource]
	if r == nil && info.Subresource != "" {
		r = h.routes[info.Resource+"/"+info.Subresource]
	}
	if r == nil {
		return plainNotFound, nil
	}
	if namespaced := info.Namespace != ""; !r.namespaced && namespaced ||
		r.namespaced && !namespaced && info.Verb != "list" && info.Verb != "watch" {
		return plainNotFound, nil
	}
	gr := schema.GroupResource{Group: h.gv.Group, Resource: info.Resource}
	if info.Subresource != "" {
		r = h.routes[info.Resource+"/"+info.Subresource]
		if r == nil || info.Subresource != "status" && info.Subresource != "scale" {
			return nil, apierrors.NewNotFound(gr, info.PathName())
		}
		var sh http.Handler
		switch info.Verb {
		case "get":
			sh = r.get
		case "update":
			sh = r.update
		case "patch":
			sh = r.patch
		}
		if sh == nil {
			return nil, apierrors.NewMethodNotSupported(gr, info.Verb)
		}
		return sh, nil
	}
	var rh http.Handler
	switch info.Verb {
	case "get":
		rh = r.get
	case "list":
		rh = r.list
	case "watch":
		if info.PathName() != "" {
			rh = r.watch
		} else {
			rh = r.watchList
		}
	case "create":
		rh = r.create
	case "update":
		rh = r.update
	case "patch":
		rh = r.patch
	case "delete":
		rh = r.delete
	case "deletecollection":
		rh = r.deleteCollection
	}
	if rh == nil {
		return nil, apierrors.NewMethodNotSupported(gr, info.Verb)
	}
	return rh, nil
}

func (r *routes) itemHandler(verb string, subresource bool) http.Handler {
	switch verb {
	case "get":
		return r.get
	case "watch":
		return r.watch
	case "update":
		return r.update
	case "patch":
		return r.patch
	case "delete":
		return r.delete
	case "create":
		if subresource {
			return r.create
		}
	}
	return nil
}

func orNotAllowed(h http.Handler) (http.Handler, error) {
	if h == nil {
		return nil, handlers.NewMethodNotAllowed()
	}
	return h, nil
}
