// Package interim is the authorizer kapi uses until real authorization
// (RBAC) exists: every authenticated user may do everything, an anonymous
// one may only read the health and version endpoints.
package interim
