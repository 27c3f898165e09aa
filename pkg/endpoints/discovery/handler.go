package discovery

import (
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
	"github.com/kapi-dev/kapi/pkg/server"
)

// Install routes discovery on h, the handler of the head of the chain, as
// the aggregator does: exact paths on its non-REST mux for /api, /apis and
// /apis/<group> (each also with a trailing slash), the group paths added
// and removed as groups come and go. Every other path, /apis/<group>/<v>
// included, falls through to the servers behind. Install h once.
func (m *Manager) Install(h *server.APIServerHandler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	api := http.HandlerFunc(m.serveAPI)
	apis := http.HandlerFunc(m.serveAPIs)
	h.NonRESTMux.Handle("/api", api)
	h.NonRESTMux.UnlistedHandle("/api/", api)
	h.NonRESTMux.Handle("/apis", apis)
	h.NonRESTMux.UnlistedHandle("/apis/", apis)
	for g := range m.routed {
		m.routeGroup(h, g)
	}
	m.heads = append(m.heads, h)
}

// InstallGroupRoot makes h, the handler of the server that serves group,
// claim the group's REST root (/api for the legacy group, else
// /apis/<group>) as kube's generic server does: the root itself (and with a
// trailing slash) answers the group's discovery, any other path below it
// that no longer root claims, such as /apis/apps/v999, answers 404 with a
// Status ("the server could not find the requested resource") instead of
// falling through.
func (m *Manager) InstallGroupRoot(h *server.APIServerHandler, group string) {
	root := "/apis/" + group
	serve := m.groupHandler(group)
	if group == "" {
		root = "/api"
		serve = http.HandlerFunc(m.serveAPI)
	}
	h.HandleREST(root, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != root && r.URL.Path != root+"/" {
			server.NotFoundInRoot(w, r)
			return
		}
		serve.ServeHTTP(w, r)
	}))
}

// Handler serves every discovery path by itself, for a server that is not
// built on server.APIServerHandler (and for tests): /api, /apis and
// /apis/<group>, each with or without a trailing slash; anything else is
// "404 page not found".
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
		for _, h := range m.heads {
			m.routeGroup(h, g)
		}
	}
	for g := range m.routed {
		if _, ok := s.groups[g]; ok {
			continue
		}
		delete(m.routed, g)
		for _, h := range m.heads {
			h.NonRESTMux.Unregister("/apis/" + g)
			h.NonRESTMux.Unregister("/apis/" + g + "/")
		}
	}
}

func (m *Manager) routeGroup(h *server.APIServerHandler, group string) {
	gh := m.groupHandler(group)
	h.NonRESTMux.Handle("/apis/"+group, gh)
	h.NonRESTMux.UnlistedHandle("/apis/"+group+"/", gh)
}

func (m *Manager) groupHandler(group string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serveGroup(w, r, group)
	})
}

// serveAPI answers /api: the legacy APIVersions, or the legacy group's
// aggregated discovery. Like kube's /api web service it takes GET only.
func (m *Manager) serveAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s := apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false).ErrStatus
		responsewriters.WriteStatus(w, &s)
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
	n, ok := negotiate(r.Header.Get("Accept"), legacyOnly)
	if !ok {
		notAcceptable(w)
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
		notAcceptable(w)
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

func notAcceptable(w http.ResponseWriter) {
	responsewriters.WriteStatus(w, &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: notAcceptableMessage,
	})
}
