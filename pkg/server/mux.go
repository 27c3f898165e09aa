package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// PathMux is the non-REST mux of a server (serving.md 33): exact paths
// first, then prefix registrations (patterns ending in "/"; the one with the
// most slashes, then the longest, wins), else the not-found handler, which
// for a delegating server is the next server's director. Patterns are taken
// literally (no wildcards). Handlers may be added while serving.
type PathMux struct {
	name string

	mu       sync.Mutex // serializes writers
	exact    map[string]http.Handler
	prefixes []prefixHandler
	listed   map[string]bool
	notFound http.Handler

	// snapshot is what readers use. A change clears it; the next reader
	// builds it again (a server registers hundreds of paths before it
	// serves, and a copy of the whole table at each one made that
	// quadratic).
	snapshot atomic.Pointer[muxSnapshot]
}

type prefixHandler struct {
	prefix  string
	handler http.Handler
}

type muxSnapshot struct {
	exact    map[string]http.Handler
	prefixes []prefixHandler
	notFound http.Handler
}

// NewPathMux returns an empty mux named name (for errors).
func NewPathMux(name string) *PathMux {
	m := &PathMux{name: name, exact: map[string]http.Handler{}, listed: map[string]bool{}, notFound: http.NotFoundHandler()}
	m.refresh()
	return m
}

// refresh drops the readers' snapshot after a change. m.mu is held.
func (m *PathMux) refresh() {
	m.snapshot.Store(nil)
}

// current returns the readers' snapshot, built from the tables if a change
// dropped it.
func (m *PathMux) current() *muxSnapshot {
	if s := m.snapshot.Load(); s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.snapshot.Load(); s != nil {
		return s
	}
	s := m.build()
	m.snapshot.Store(s)
	return s
}

// build copies the tables into a snapshot. m.mu is held.
func (m *PathMux) build() *muxSnapshot {
	exact := make(map[string]http.Handler, len(m.exact))
	for k, v := range m.exact {
		exact[k] = v
	}
	prefixes := append([]prefixHandler(nil), m.prefixes...)
	sort.SliceStable(prefixes, func(i, j int) bool {
		si, sj := strings.Count(prefixes[i].prefix, "/"), strings.Count(prefixes[j].prefix, "/")
		if si != sj {
			return si > sj
		}
		return len(prefixes[i].prefix) > len(prefixes[j].prefix)
	})
	return &muxSnapshot{exact: exact, prefixes: prefixes, notFound: m.notFound}
}

// Handle registers an exact path, listed in the index (serving.md 36).
// A second registration of the same path is a programming error and panics,
// as with http.ServeMux.
func (m *PathMux) Handle(path string, h http.Handler) {
	m.handle(path, h, true)
}

// UnlistedHandle registers an exact path not listed in the index.
func (m *PathMux) UnlistedHandle(path string, h http.Handler) {
	m.handle(path, h, false)
}

func (m *PathMux) handle(path string, h http.Handler, listed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.exact[path]; dup {
		panic(fmt.Sprintf("%s: duplicate handler for path %q", m.name, path))
	}
	m.exact[path] = h
	if listed {
		m.listed[path] = true
	}
	m.refresh()
}

// HandlePrefix registers a prefix, listed in the index; it must end in "/".
func (m *PathMux) HandlePrefix(prefix string, h http.Handler) {
	m.handlePrefix(prefix, h, true)
}

// UnlistedHandlePrefix registers a prefix not listed in the index.
func (m *PathMux) UnlistedHandlePrefix(prefix string, h http.Handler) {
	m.handlePrefix(prefix, h, false)
}

func (m *PathMux) handlePrefix(prefix string, h http.Handler, listed bool) {
	if !strings.HasSuffix(prefix, "/") {
		panic(fmt.Sprintf("%s: prefix %q must end in /", m.name, prefix))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.prefixes {
		if p.prefix == prefix {
			panic(fmt.Sprintf("%s: duplicate handler for prefix %q", m.name, prefix))
		}
	}
	m.prefixes = append(m.prefixes, prefixHandler{prefix, h})
	if listed {
		m.listed[prefix] = true
	}
	m.refresh()
}

// Unregister removes an exact path or prefix (CRDs come and go).
func (m *PathMux) Unregister(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.exact, path)
	delete(m.listed, path)
	out := m.prefixes[:0]
	for _, p := range m.prefixes {
		if p.prefix != path {
			out = append(out, p)
		}
	}
	m.prefixes = out
	m.refresh()
}

// NotFoundHandler sets what unmatched requests get.
func (m *PathMux) NotFoundHandler(h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notFound = h
	m.refresh()
}

// ListedPaths returns the sorted listed paths.
func (m *PathMux) ListedPaths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.listed))
	for p := range m.listed {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP dispatches by exact path, then prefix, then not-found.
func (m *PathMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := m.current()
	if h, ok := s.exact[r.URL.Path]; ok {
		h.ServeHTTP(w, r)
		return
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(r.URL.Path, p.prefix) {
			p.handler.ServeHTTP(w, r)
			return
		}
	}
	s.notFound.ServeHTTP(w, r)
}
