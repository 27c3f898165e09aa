package discovery

import (
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// Mux is the non-REST mux of the head of the chain, where [Manager.Install]
// routes discovery (server.PathMux is one). Requests for paths it does not
// hold fall through to the servers behind.
type Mux interface {
	// Handle serves path, listed in the index of paths.
	Handle(path string, h http.Handler)
	// UnlistedHandle serves path, not listed in the index.
	UnlistedHandle(path string, h http.Handler)
	// Unregister stops serving path.
	Unregister(path string)
}

// RESTMounter is the routes of a server that serves a group
// (server.APIServerHandler is one), where [Manager.InstallGroupRoot]
// mounts the group's root.
type RESTMounter interface {
	// HandleREST serves root and every path below it with h.
	HandleREST(root string, h http.Handler)
}

// Install routes discovery on mux, the non-REST mux of the head of the
// chain, as the aggregator does: exact paths for /api, /apis and
// /apis/<group> (each also with a trailing slash), the group paths added
// and removed as groups come and go. Every other path, /apis/<group>/<v>
// included, falls through to the servers behind. Install on a mux once.
func (m *Manager) Install(mux Mux) {
	m.mu.Lock()
	defer m.mu.Unlock()
	api := http.HandlerFunc(m.serveAPI)
	apis := http.HandlerFunc(m.serveAPIs)
	mux.Handle("/api", api)
	mux.UnlistedHandle("/api/", api)
	mux.Handle("/apis", apis)
	mux.UnlistedHandle("/apis/", apis)
	for g := range m.routed {
		m.routeGroup(mux, g)
	}
	m.heads = append(m.heads, mux)
}

// InstallGroupRoot mounts [Manager.GroupRootHandler] of group on the routes
// of the server that serves group.
func (m *Manager) InstallGroupRoot(routes RESTMounter, group string) {
	routes.HandleREST(m.GroupRootHandler(group))
}

// GroupRootHandler returns the group's REST root (/api for the legacy
// group, else /apis/<group>) and its handler, for the server that serves
// group to claim the root as kube's generic server does: the root itself
// (and with a trailing slash) answers the group's discovery, any other
// path below it that no longer root claims, such as /apis/apps/v999,
// answers 404 with a Status ("the server could not find the requested
// resource") instead of falling through.
func (m *Manager) GroupRootHandler(group string) (root string, h http.Handler) {
	root = "/apis/" + group
	serve := m.groupHandler(group)
	if group == "" {
		root = "/api"
		serve = http.HandlerFunc(m.serveAPI)
	}
	return root, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != root && r.URL.Path != root+"/" {
			handlers.NotFoundInRoot(w, r)
			return
		}
		serve.ServeHTTP(w, r)
	})
}

// Handler serves every discovery path by itself, for a server that is not
// built on a [Mux] (and for tests): /api, /apis and /apis/<group>, each
// with or without a trailing slash; anything else is "404 page not found".
func (m *Manager) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; p {
		case "/api", "/api/":
			m.serveAPI(w, r)
		case "/apis", "/apis/":
			m.serveAPIs(w, r)
		default:
			if g, ok := strings.CutPrefix(p, "/apis/"); ok {
				g = strings.TrimSuffix(g, "/")
				if g != "" && !strings.Contains(g, "/") {
					m.serveGroup(w, r, g)
					return
				}
			}
			notFound(w)
		}
	})
}

// routeGroupsLocked adds and removes the /apis/<group> routes on the heads
// to match s. m.mu is held.
func (m *Manager) routeGroupsLocked(s *snapshot) {
	for g := range s.groups {
		if m.routed[g] {
			continue
		}
		m.routed[g] = true
		for _, mux := range m.heads {
			m.routeGroup(mux, g)
		}
	}
	for g := range m.routed {
		if _, ok := s.groups[g]; ok {
			continue
		}
		delete(m.routed, g)
		for _, mux := range m.heads {
			mux.Unregister("/apis/" + g)
			mux.Unregister("/apis/" + g + "/")
		}
	}
}

func (m *Manager) routeGroup(mux Mux, group string) {
	gh := m.groupHandler(group)
	mux.Handle("/apis/"+group, gh)
	mux.UnlistedHandle("/apis/"+group+"/", gh)
}

func (m *Manager) groupHandler(group string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serveGroup(w, r, group)
	})
}

// serveAPI answers /api: the legacy APIVersions, or the legacy group's
// aggregated discovery. Like kube's /api web service it takes GET only
// (HEAD is 405 there, for aggregated discovery too).
func (m *Manager) serveAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		handlers.MethodNotAllowedInRoot(w, r)
		return
	}
	s := m.snap.Load()
	if len(s.coreVersions) == 0 {
		notFound(w)
		return
	}
	if n, ok := m.aggregatedRequested(r); ok {
		m.writeAggregated(w, r, n, s.aggAPI)
		return
	}
	// Legacy /api is a go-restful route upstream (aggregated discovery
	// is answered before it).
	if !responsewriters.RestfulAccepts(r.Header.Get("Accept"), restfulProduces) {
		st := responsewriters.ErrorToStatus(responsewriters.RestfulNotAcceptable(restfulProduces))
		handlers.WriteStatusNegotiated(w, r, st)
		return
	}
	n, ok := negotiate(r.Header.Get("Accept"), legacyOnly)
	if !ok {
		notAcceptable(w, r)
		return
	}
	doc := s.apiVersions
	if doc == nil {
		doc = newDocument(m.codecs, apiVersions(s.coreVersions, r.Host))
	}
	m.write(w, r, doc, n, n.media.String())
}

// serveAPIs answers /apis: the legacy APIGroupList, or aggregated discovery
// of every group but the legacy one. Like the aggregator, it answers any
// method, and /apis/ only in the legacy form.
func (m *Manager) serveAPIs(w http.ResponseWriter, r *http.Request) {
	s := m.snap.Load()
	if r.URL.Path == "/apis" {
		if n, ok := m.aggregatedRequested(r); ok {
			m.writeAggregated(w, r, n, s.aggAPIs)
			return
		}
	}
	m.writeLegacy(w, r, s.groupList)
}

// serveGroup answers /apis/<group> with the legacy APIGroup.
func (m *Manager) serveGroup(w http.ResponseWriter, r *http.Request, group string) {
	doc, ok := m.snap.Load().groups[group]
	if !ok {
		notFound(w)
		return
	}
	m.writeLegacy(w, r, doc)
}

func (m *Manager) writeLegacy(w http.ResponseWriter, r *http.Request, doc *document) {
	n, ok := negotiate(r.Header.Get("Accept"), legacyOnly)
	if !ok {
		notAcceptable(w, r)
		return
	}
	m.write(w, r, doc, n, n.media.String())
}

// aggregatedRequested reports whether r asks for aggregated discovery in a
// version served, and how.
func (m *Manager) aggregatedRequested(r *http.Request) (negotiated, bool) {
	if m.cfg.DisableAggregated {
		return negotiated{}, false
	}
	// An empty Accept header negotiates JSON without any check: legacy.
	n, ok := negotiate(r.Header.Get("Accept"), m.allowAggregated)
	return n, ok && n.convert != nil
}

func (m *Manager) allowAggregated(t *schema.GroupVersionKind) bool {
	if t == nil || t.Group != apidiscoveryv2.SchemeGroupVersion.Group || t.Kind != "APIGroupDiscoveryList" {
		return false
	}
	return t.Version == "v2" || (m.cfg.ServeV2Beta1 && t.Version == "v2beta1")
}

// writeAggregated writes an aggregated list with its ETag, or 304 when the
// client has it (If-None-Match equal to the ETag, as upstream compares).
func (m *Manager) writeAggregated(w http.ResponseWriter, r *http.Request, n negotiated, d *aggregatedDoc) {
	// Upstream computes the list here (before the ETag check), the first
	// time it is asked for since the last change, and counts it.
	if c := m.cfg.AggregationCount; c != nil && d.served.CompareAndSwap(false, true) {
		c.Inc()
	}
	h := w.Header()
	tag := d.ETag()
	h.Set("ETag", tag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	doc := d.v2
	if n.convert.Version == "v2beta1" {
		doc = d.V2Beta1()
	}
	ct := n.media.String() + ";g=" + n.convert.Group + ";v=" + n.convert.Version + ";as=" + n.convert.Kind
	m.write(w, r, doc, n, ct)
}

// write sends doc in the negotiated encoding, gzipped when large and the
// client accepts gzip.
func (m *Manager) write(w http.ResponseWriter, r *http.Request, doc *document, n negotiated, contentType string) {
	enc := n.media.enc
	if enc == encJSON && (n.pretty || prettyRequested(r)) {
		enc = encJSONPretty
	}
	body, err := doc.bytes(enc)
	if err != nil {
		m.internalError(w, r, err)
		return
	}
	// The audit event records the object in JSON whatever the response's
	// encoding, as upstream's WriteObjectNegotiated logs it.
	if audit.ResponseObjectWanted(r.Context()) {
		if raw, err := doc.bytes(encJSON); err == nil {
			audit.LogResponseJSON(r.Context(), raw)
		}
	}
	h := w.Header()
	if len(body) > gzipThreshold && acceptsGzip(r) {
		gz, err := doc.gzipped(enc)
		if err != nil {
			m.internalError(w, r, err)
			return
		}
		body = gz
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
	}
	h.Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (m *Manager) internalError(w http.ResponseWriter, r *http.Request, err error) {
	m.logger.Error("discovery response", "path", r.URL.Path, "err", err)
	responsewriters.WriteError(w, apierrors.NewInternalError(err))
}

// notFound is the end of the chain's plain 404.
func notFound(w http.ResponseWriter) {
	http.Error(w, "404 page not found", http.StatusNotFound)
}

// restfulProduces is what upstream's go-restful route of /api produces.
var restfulProduces = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}

func notAcceptable(w http.ResponseWriter, r *http.Request) {
	handlers.WriteStatusNegotiated(w, r, &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: notAcceptableMessage,
	})
}
