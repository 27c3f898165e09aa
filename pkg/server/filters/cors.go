package filters

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// CORS response header values (serving.md 29).
const (
	corsAllowMethods  = "POST, GET, OPTIONS, PUT, DELETE, PATCH"
	corsAllowHeaders  = "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since"
	corsExposeHeaders = "Date"
)

// CompileCORSOrigins compiles --cors-allowed-origins. Each pattern must pin
// the start of the host (contain `^` or `//`) and its end (contain `$` or
// `:`), so that e.g. "example.com" cannot match "example.com.evil.io".
func CompileCORSOrigins(patterns []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		if !(strings.Contains(p, "^") || strings.Contains(p, "//")) || !(strings.Contains(p, "$") || strings.Contains(p, ":")) {
			return nil, fmt.Errorf("--cors-allowed-origins: regular expression %q must pin the start (^ or //) and the end ($ or :) of the origin", p)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("--cors-allowed-origins: invalid regular expression %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// WithCORS answers CORS for origins matching one of allowed (serving.md 29):
// the Access-Control-* headers, and 204 without going further for a
// matching OPTIONS preflight. Other requests pass through untouched. No
// patterns: no filter.
func WithCORS(handler http.Handler, allowed []*regexp.Regexp) http.Handler {
	if len(allowed) == 0 {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !originAllowed(origin, allowed) {
			handler.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", corsAllowMethods)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		h.Set("Access-Control-Allow-Credentials", "true")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		handler.ServeHTTP(w, r)
	})
}

func originAllowed(origin string, allowed []*regexp.Regexp) bool {
	for _, re := range allowed {
		if re.MatchString(origin) {
			return true
		}
	}
	return false
}
