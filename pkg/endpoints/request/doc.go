// Package request holds what the handler chain learns about a request
// (RequestInfo, the user, the audit ID, when it was received) and carries it
// on the request context.
package request
