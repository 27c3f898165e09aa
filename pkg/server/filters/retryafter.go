package filters

import "net/http"

// RetryAfterMessage is the body (before the newline) of the shutdown 429.
const RetryAfterMessage = "The apiserver is shutting down, please try again later."

// WithRetryAfter answers every non-exempt request with 429 once
// notAcceptingNewRequest is closed (lifecycle.md 26): Retry-After: 5,
// Connection: close (HTTP/1.1 closes the connection; HTTP/2 sends GOAWAY),
// text/plain body RetryAfterMessage. Loopback clients, /readyz, /livez,
// /healthz and /metrics are still served (lifecycle.md 24). A nil channel
// disables the filter.
func WithRetryAfter(handler http.Handler, notAcceptingNewRequest <-chan struct{}) http.Handler {
	if notAcceptingNewRequest == nil {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-notAcceptingNewRequest:
		default:
			handler.ServeHTTP(w, r)
			return
		}
		if isExemptFromShutdown(r) {
			handler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "5")
		http.Error(w, RetryAfterMessage, http.StatusTooManyRequests)
	})
}
