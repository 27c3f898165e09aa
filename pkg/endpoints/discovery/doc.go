// Package discovery serves API discovery for a whole server chain, as
// kube-apiserver does: the legacy documents at /api (APIVersions), /apis
// (APIGroupList) and /apis/<group> (APIGroup), and aggregated discovery
// (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) at /api and /apis when the
// Accept header asks for it.
//
// One [Manager] holds the group-versions of every server of the chain: each
// server adds what it installs ([Manager.AddGroupVersion], or several at once
// with [Manager.Update], which readers see as one change) and the head of the
// chain serves the union ([Manager.Install]). The per-group-version
// APIResourceList (/apis/<group>/<version>) is served by the installer, not
// here; the Manager receives the same []metav1.APIResource lists.
//
// Order follows the aggregator. Each group-version has a [Priority], like an
// APIService's groupPriorityMinimum and versionPriority: built-in groups take
// kube-apiserver's table ([DefaultPriority]), other groups (CRDs) take 1000
// and 100 as the CRD registration controller gives them.
//   - /apis (legacy): group-versions sorted by group priority (highest
//     first), then by APIService name ("<version>.<group>"); groups appear in
//     the order of their first group-version.
//   - aggregated: groups sorted by the highest group priority of their
//     versions, then by name.
//   - versions in a group, both forms: version priority (highest first),
//     then kube-aware version order (v1 > v1beta1 > v1alpha1); the first is
//     the preferred version.
//
// Responses are encoded once per change (lazily, on the first request that
// needs a given encoding) and shared by every later request; aggregated
// responses carry an ETag (the SHA-512 of the JSON document, as upstream
// computes it) and answer If-None-Match with 304.
package discovery
