package server

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// APIServerHandler holds a server's routes (serving.md 32–33): REST roots
// (e.g. /api/v1, /version) claim their whole subtree; everything else goes to
// the non-REST mux, whose not-found handler is the next server's director.
//
// FullHandlerChain is the director wrapped in the filters; only the head of
// the chain serves it. Director is used, unfiltered, by the server in front.
type APIServerHandler struct {
	FullHandlerChain http.Handler
	Director         http.Handler
	NonRESTMux       *PathMux

	mu    sync.Mutex
	roots atomic.Pointer[map[string]http.Handler]
}

func newAPIServerHandler(name string, notFound http.Handler) *APIServerHandler {
	h := &APIServerHandler{NonRESTMux: NewPathMux(name)}
	h.NonRESTMux.NotFoundHandler(notFound)
	empty := map[string]http.Handler{}
	h.roots.Store(&empty)
	h.Director = http.HandlerFunc(h.direct)
	return h
}

// HandleREST registers a REST root such as "/api/v1" or "/version": the
// root path and everything below it are served by h. Unknown paths below a
// root answer 404 there and do not fall through (serving.md 33). The root
// "/apis" claims only "/apis" and "/apis/".
func (a *APIServerHandler) HandleREST(root string, h http.Handler) {
	a.UpdateREST(map[string]http.Handler{root: h}, nil)
}

// UnregisterREST removes a REST root.
func (a *APIServerHandler) UnregisterREST(root string) {
	a.UpdateREST(nil, []string{root})
}

// UpdateREST registers (or replaces) the REST roots of set and removes
// those of remove, in one step: a request sees all of the changes or
// none (the served versions of a CRD appear and go together).
func (a *APIServerHandler) UpdateREST(set map[string]http.Handler, remove []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := *a.roots.Load()
	next := make(map[string]http.Handler, len(old)+len(set))
	for k, v := range old {
		next[k] = v
	}
	for _, k := range remove {
		delete(next, k)
	}
	for k, v := range set {
		next[k] = v
	}
	a.roots.Store(&next)
}

// RESTRoots returns the sorted registered REST roots.
func (a *APIServerHandler) RESTRoots() []string {
	roots := *a.roots.Load()
	out := make([]string, 0, len(roots))
	for r := range roots {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func (a *APIServerHandler) direct(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	roots := *a.roots.Load()
	if h, ok := roots[path]; ok {
		h.ServeHTTP(w, r)
		return
	}
	// "/apis" only claims "/apis" and "/apis/"; longer roots claim subtrees.
	// Look up each ancestor of path, longest first: a table lookup per
	// segment rather than a scan of every root.
	if path == "/apis/" {
		if h, ok := roots["/apis"]; ok {
			h.ServeHTTP(w, r)
			return
		}
	}
	for p := path; ; {
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			break
		}
		p = p[:i]
		if p == "/apis" {
			break
		}
		if h, ok := roots[p]; ok {
			h.ServeHTTP(w, r)
			return
		}
	}
	a.NonRESTMux.ServeHTTP(w, r)
}

func (a *APIServerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.FullHandlerChain.ServeHTTP(w, r)
}

// NotFoundInRoot answers a path under a REST root that nothing serves:
// 404 Status "the server could not find the requested resource".
func NotFoundInRoot(w http.ResponseWriter, _ *http.Request) {
	responsewriters.WriteError(w, apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false))
}
