package filters

import "net/http"

// WithCacheControl sets `Cache-Control: no-cache, private` unless the header
// is already present (serving.md 22); handlers may still override it.
func WithCacheControl(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.Header()["Cache-Control"]; !ok {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
		handler.ServeHTTP(w, r)
	})
}
