package server

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// NotFoundHandler is the end of the chain (serving.md 34). A request that
// entered before MuxAndDiscoveryComplete (marked by the filter at the head)
// gets 503 + Retry-After: 5, since the route it wants may not be installed
// yet; any other gets a plain 404.
func NotFoundHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if request.MuxIncomplete(r.Context()) {
			handlers.WriteStatusNegotiated(w, r, &metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    http.StatusServiceUnavailable,
				Reason:  metav1.StatusReasonServiceUnavailable,
				Message: "the request has been made before all known HTTP paths have been installed, please try again",
				Details: &metav1.StatusDetails{RetryAfterSeconds: 5},
			})
			return
		}
		http.Error(w, "404 page not found", http.StatusNotFound)
	})
}
