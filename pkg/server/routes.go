package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// installBaseRoutes installs what every server has: /version, the index
// at / and /index.html, and /metrics.
func (s *GenericServer) installBaseRoutes() {
	if s.cfg.Version != nil {
		s.handler.HandleREST("/version", versionHandler(s.cfg.Version))
	}
	index := http.HandlerFunc(s.serveIndex)
	s.handler.NonRESTMux.UnlistedHandle("/", index)
	s.handler.NonRESTMux.UnlistedHandle("/index.html", index)
	if s.cfg.MetricsRegistry != nil {
		var g prometheus.Gatherer = s.cfg.MetricsRegistry
		if s.cfg.MetricsGatherer != nil {
			g = s.cfg.MetricsGatherer
		}
		s.handler.NonRESTMux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	}
	if s.cfg.EnableProfiling {
		s.installProfiling()
	}
}

// installProfiling serves Go's profiles under /debug/pprof/, as upstream's
// routes.Profiling does (the bare /debug/pprof redirects there).
func (s *GenericServer) installProfiling() {
	mux := s.handler.NonRESTMux
	mux.UnlistedHandle("/debug/pprof", http.RedirectHandler("/debug/pprof/", http.StatusFound))
	mux.UnlistedHandlePrefix("/debug/pprof/", http.HandlerFunc(pprof.Index))
	mux.UnlistedHandle("/debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	mux.UnlistedHandle("/debug/pprof/symbol", http.HandlerFunc(pprof.Symbol))
	mux.UnlistedHandle("/debug/pprof/trace", http.HandlerFunc(pprof.Trace))
}

// versionHandler serves /version (serving.md 37): 2-space-indented JSON, no
// trailing newline; GET only.
func versionHandler(info any) http.Handler {
	body, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		panic(err) // a version.Info always encodes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" && r.URL.Path != "/version/" {
			handlers.NotFoundInRoot(w, r)
			return
		}
		// A go-restful GET route upstream (HEAD is 405), producing JSON
		// only.
		if r.Method != http.MethodGet {
			handlers.MethodNotAllowedInRoot(w, r)
			return
		}
		if produces := []string{"application/json"}; !responsewriters.RestfulAccepts(r.Header.Get("Accept"), produces) {
			handlers.WriteStatusNegotiated(w, r, responsewriters.ErrorToStatus(responsewriters.RestfulNotAcceptable(produces)))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

// serveIndex answers / and /index.html with the paths of the whole chain
// (serving.md 36).
func (s *GenericServer) serveIndex(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	_ = enc.Encode(metav1.RootPaths{Paths: s.ListedPaths()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
}
