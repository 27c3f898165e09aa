// Package tokencache caches the results of a bearer-token authenticator,
// as kube-apiserver caches those of its token authenticators' union
// (k8s.io/apiserver pkg/authentication/token/cache, v0.37.2; wired in
// k8s.io/kubernetes pkg/kubeapiserver/authenticator/config.go with a
// success TTL of 10 s and no failure caching).
//
// A result is kept under an HMAC-SHA256 (with a key random per cache) of
// the token and the requested audiences, never under the token itself.
// Concurrent authentications of one key share one call of the wrapped
// authenticator, run on a context detached from the requests' (so a
// request that goes away neither cancels it nor has its cancellation
// cached); the audit annotations and warnings that call adds are kept
// with the result and added again to every request it serves. The four
// authentication_token_cache_* metric families count what it does.
package tokencache
