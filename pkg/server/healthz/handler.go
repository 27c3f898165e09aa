package healthz

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Mux is where the handlers are installed: the server's non-REST mux.
// Patterns are exact paths, taken literally (no wildcards); a pattern
// registered twice is the mux's concern (kapi's PathMux panics).
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// HandlerOptions tunes [InstallPathHandler]. The zero value works.
type HandlerOptions struct {
	// FirstSuccess, if set, is called once, on the first 200 of the
	// aggregate path, before the response is written (HasBeenReady,
	// health.md 33).
	FirstSuccess func()
	// Metrics records each evaluated check; nil records nothing.
	Metrics *Metrics
	// Logger receives failing checks with their errors; nil means
	// slog.Default().
	Logger *slog.Logger
	// Instrument, if set, wraps the aggregate handler (not the single-check
	// ones), e.g. with request metrics under subresource path (health.md 35).
	Instrument func(path string, h http.Handler) http.Handler
}

// InstallPathHandler installs, on mux, the aggregate handler at path
// ("/healthz", "/livez", "/readyz") and one single-check handler at
// path+"/"+name per check. The checks are copied: the list is frozen here.
// With no checks a lone [PingHealthz] is installed (health.md 4). If two
// checks share a name both run on the aggregate path, and the single-check
// path serves the first.
func InstallPathHandler(mux Mux, path string, opts HandlerOptions, checks ...HealthChecker) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if len(checks) == 0 {
		checks = []HealthChecker{PingHealthz}
	}
	checks = slices.Clone(checks)
	names := make([]string, len(checks))
	for i, c := range checks {
		names[i] = c.Name()
	}
	logger.Debug("installing health checks", "path", path, "checks", names)

	var root http.Handler = &aggregateHandler{
		endpoint:     endpointName(path),
		checks:       checks,
		firstSuccess: opts.FirstSuccess,
		metrics:      opts.Metrics,
		logger:       logger,
	}
	if opts.Instrument != nil {
		root = opts.Instrument(path, root)
	}
	mux.Handle(path, root)

	installed := make(map[string]bool, len(checks))
	for _, c := range checks {
		name := c.Name()
		if installed[name] {
			logger.Warn("duplicate health check name, single-check path serves the first", "path", path, "check", name)
			continue
		}
		installed[name] = true
		mux.Handle(path+"/"+name, singleCheckHandler{check: c})
	}
}

// endpointName is the first path segment: "/readyz" -> "readyz".
func endpointName(path string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return name
}

// aggregateHandler serves /<ep> (health.md §B).
type aggregateHandler struct {
	endpoint     string
	checks       []HealthChecker
	firstSuccess func()
	once         sync.Once
	metrics      *Metrics
	logger       *slog.Logger
}

func (h *aggregateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	_, verbose := query["verbose"]
	excluded := newExclusions(query["exclude"])

	var body bytes.Buffer
	var failed []string
	var reasons []string
	for _, check := range h.checks {
		name := check.Name()
		if excluded.byName(name) {
			fmt.Fprintf(&body, "[+]%s excluded: ok\n", name)
			continue
		}
		if group, ok := excluded.byGroup(check); ok {
			fmt.Fprintf(&body, "[+]%s excluded with %s: ok\n", name, group)
			continue
		}
		err := check.Check(r)
		h.metrics.observe(name, h.endpoint, err)
		if err != nil {
			// The reason is withheld: the aggregate endpoints are public.
			fmt.Fprintf(&body, "[-]%s failed: reason withheld\n", name)
			failed = append(failed, name)
			reasons = append(reasons, name+": "+err.Error())
			continue
		}
		fmt.Fprintf(&body, "[+]%s ok\n", name)
	}
	if unmatched := excluded.unmatched(); len(unmatched) > 0 {
		quoted := formatQuoted(unmatched)
		fmt.Fprintf(&body, "warn: some health checks cannot be excluded: no matches for %s\n", quoted)
		h.logger.Debug("cannot exclude some health checks, no health checks match", "endpoint", h.endpoint, "names", quoted)
	}

	if len(failed) > 0 {
		h.logger.Info("health check failed", "endpoint", h.endpoint, "checks", strings.Join(failed, ","), "errors", reasons)
		// http.Error sets text/plain; charset=utf-8 and nosniff and appends
		// the final newline.
		http.Error(w, body.String()+h.endpoint+" check failed", http.StatusInternalServerError)
		return
	}

	if h.firstSuccess != nil {
		h.once.Do(h.firstSuccess)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !verbose {
		_, _ = w.Write([]byte("ok"))
		return
	}
	body.WriteString(h.endpoint + " check passed\n")
	_, _ = body.WriteTo(w)
}

// exclusions are the values of ?exclude=, each matched against check names
// first and then against groups (health.md 11). A value that matched a
// name still excludes the checks of a group of the same name.
type exclusions struct {
	values map[string]bool // value -> matched something
}

func newExclusions(values []string) exclusions {
	if len(values) == 0 {
		return exclusions{}
	}
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = false
	}
	return exclusions{values: m}
}

func (e exclusions) byName(name string) bool {
	if _, ok := e.values[name]; !ok {
		return false
	}
	e.values[name] = true
	return true
}

func (e exclusions) byGroup(check HealthChecker) (string, bool) {
	g, ok := check.(GroupedChecker)
	if !ok || len(e.values) == 0 {
		return "", false
	}
	group := g.Group()
	if _, ok := e.values[group]; !ok || group == "" {
		return "", false
	}
	e.values[group] = true
	return group, true
}

// unmatched returns the values that matched nothing, sorted.
func (e exclusions) unmatched() []string {
	var out []string
	for v, matched := range e.values {
		if !matched {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// formatQuoted Go-quotes names and joins them with commas, no spaces.
func formatQuoted(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return strings.Join(quoted, ",")
}

// singleCheckHandler serves /<ep>/<name> (health.md §C): it ignores the
// query and shows the real error.
type singleCheckHandler struct {
	check HealthChecker
}

func (h singleCheckHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.check.Check(r); err != nil {
		http.Error(w, "internal server error: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// What content sniffing would give for "ok", set explicitly.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}
