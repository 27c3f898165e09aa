// Package authorizer is the authorization contract: the [Attributes] of a
// request, an [Authorizer] that decides on them, and its [Decision]. The
// authorization filter (pkg/server/filters) and the access reviews call an
// Authorizer; implementations live in sub-packages (interim, and RBAC to
// come).
package authorizer
