// Package remote merges the discovery and OpenAPI documents of aggregated
// API servers (APIServices with spec.service set) into the head of the
// chain, as kube-aggregator does.
//
// For every remote APIService the [Controller]:
//
//  1. lists its group-version in discovery at once, with no resources and
//     freshness Stale (the legacy /apis lists every APIService, available or
//     not, ordered by groupPriorityMinimum then versionPriority);
//  2. fetches the backend's aggregated discovery (GET /apis, Accept
//     apidiscovery.k8s.io/v2 or v2beta1, If-None-Match with the last ETag)
//     and publishes its group-version's resources as Current; a backend that
//     does not answer aggregated discovery is asked for the legacy
//     APIResourceList at /apis/<group>/<version>;
//  3. when a later fetch fails, or the APIService is not Available, keeps
//     the last resources and marks them Stale;
//  4. fetches /openapi/v2 (If-None-Match; without a backend ETag, a hash of
//     the body detects changes) and merges the paths under
//     /apis/<group>/<version> with the definitions they reference,
//     transitively; fetches the /openapi/v3 index and, when its hash
//     changed, the document of apis/<group>/<version>;
//  5. refreshes all of it every Config.Resync, failed fetches sooner, with
//     backoff;
//  6. on removal of the APIService removes its group-version from discovery
//     and everything it added to OpenAPI.
//
// Fetches run on a bounded pool of workers, each request with its own
// timeout, so a hanging backend delays only itself.
package remote
