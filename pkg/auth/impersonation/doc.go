// Package impersonation decides whether a requestor may act as the user
// its Impersonate-* headers name, as kube-apiserver v1.37 does with
// constrained impersonation (KEP-5284, ConstrainedImpersonation: alpha in
// v1.35, beta and on by default since v1.36). The modes are tried in
// upstream's order, the first that allows wins, else the first denial is
// returned:
//
//   - associated-node: a service account whose token is bound to a pod on
//     node N (extra authentication.kubernetes.io/node-name = N) may act as
//     system:node:N with impersonate:associated-node on nodes, plus
//     impersonate-on:associated-node:<verb> on what the request does;
//   - arbitrary-node: impersonate:arbitrary-node on nodes/<N>, plus
//     impersonate-on:arbitrary-node:<verb>;
//   - serviceaccount: impersonate:serviceaccount on the service account,
//     plus impersonate-on:serviceaccount:<verb>;
//   - user-info: any other user, impersonate:user-info on users, groups,
//     uids and userextras (authentication.k8s.io), plus
//     impersonate-on:user-info:<verb>;
//   - legacy: the impersonate verb on users, groups, serviceaccounts
//     (core group) and uids and userextras, whatever the request does.
//
// The three constrained modes for nodes and service accounts allow only
// the user name to be asked for: the groups are fixed (system:nodes, the
// service account's groups). Decisions are remembered as upstream's
// (Tracker): the mode that last allowed a requestor is tried first next
// time (which decides whose refusal a client sees), and the constrained
// modes reuse what they allowed for 10 seconds (so authorizers are asked
// less, and a revoked grant can hold for up to 10 seconds).
package impersonation
