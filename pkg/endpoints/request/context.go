package request

import (
	"context"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

type key int

const (
	requestInfoKey key = iota
	userKey
	auditIDKey
	receivedTimestampKey
	muxIncompleteKey
	namespaceKey
	authorizerKey
	stateKey
)

// WithAuthorizer returns a context carrying the authorizer that allowed
// the request (the authorization filter's), for the checks handlers make
// themselves (a create that an update or patch turns into).
func WithAuthorizer(ctx context.Context, a authorizer.Authorizer) context.Context {
	return context.WithValue(ctx, authorizerKey, a)
}

// AuthorizerFrom returns the authorizer on ctx; false when the request
// was not authorized by a filter (a server built without authorization).
func AuthorizerFrom(ctx context.Context) (authorizer.Authorizer, bool) {
	a, ok := ctx.Value(authorizerKey).(authorizer.Authorizer)
	return a, ok && a != nil
}

// WithNamespace returns a context carrying the request's namespace (""
// for cluster-scoped resources and all-namespace lists).
func WithNamespace(ctx context.Context, ns string) context.Context {
	return context.WithValue(ctx, namespaceKey, ns)
}

// NamespaceFrom returns the namespace on ctx, or "".
func NamespaceFrom(ctx context.Context) string {
	switch ns := ctx.Value(namespaceKey).(type) {
	case string:
		return ns
	case *string: // a State's
		return *ns
	}
	return ""
}

// WithRequestInfo returns a context carrying info.
func WithRequestInfo(ctx context.Context, info *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey, info)
}

// RequestInfoFrom returns the RequestInfo on ctx.
func RequestInfoFrom(ctx context.Context) (*RequestInfo, bool) {
	info, ok := ctx.Value(requestInfoKey).(*RequestInfo)
	return info, ok
}

// WithUser returns a context carrying the authenticated user.
func WithUser(ctx context.Context, u *user.Info) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the authenticated user on ctx.
func UserFrom(ctx context.Context) (*user.Info, bool) {
	u, ok := ctx.Value(userKey).(*user.Info)
	return u, ok && u != nil
}

// WithAuditID returns a context carrying the request's audit ID.
func WithAuditID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, auditIDKey, id)
}

// AuditIDFrom returns the audit ID on ctx, or "".
func AuditIDFrom(ctx context.Context) string {
	switch id := ctx.Value(auditIDKey).(type) {
	case string:
		return id
	case *string: // a State's
		return *id
	}
	return ""
}

// WithReceivedTimestamp returns a context carrying when the request arrived.
func WithReceivedTimestamp(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, receivedTimestampKey, t)
}

// ReceivedTimestampFrom returns when the request arrived.
func ReceivedTimestampFrom(ctx context.Context) (time.Time, bool) {
	switch t := ctx.Value(receivedTimestampKey).(type) {
	case time.Time:
		return t, true
	case *time.Time: // a State's
		return *t, true
	}
	return time.Time{}, false
}

// WithMuxIncomplete marks a request that entered the chain before
// MuxAndDiscoveryComplete fired (serving.md 16, 34).
func WithMuxIncomplete(ctx context.Context) context.Context {
	return context.WithValue(ctx, muxIncompleteKey, true)
}

// MuxIncomplete reports whether the request entered before
// MuxAndDiscoveryComplete.
func MuxIncomplete(ctx context.Context) bool {
	v, _ := ctx.Value(muxIncompleteKey).(bool)
	return v
}

// AuthorizerAttributes are what the authorizers are asked about the
// request on ctx (its user and request info), as upstream's
// GetAuthorizerAttributes: a list, watch or deletecollection's selectors
// are parsed; an unparsable one is recorded as an error with no
// requirements (the handler refuses the request). False without request
// info.
func AuthorizerAttributes(ctx context.Context) (authorizer.Attributes, bool) {
	info, ok := RequestInfoFrom(ctx)
	if !ok {
		return authorizer.Attributes{}, false
	}
	u, _ := UserFrom(ctx)
	a := authorizer.Attributes{
		User:            u,
		Verb:            info.Verb,
		ResourceRequest: info.IsResourceRequest,
		Namespace:       info.Namespace,
		APIGroup:        info.APIGroup,
		APIVersion:      info.APIVersion,
		Resource:        info.Resource,
		Subresource:     info.Subresource,
		Name:            info.Name,
		Path:            info.Path,
	}
	if info.FieldSelector != "" {
		a.FieldSelector, a.FieldSelectorErr = authorizer.ParseFieldSelector(info.FieldSelector)
	}
	if info.LabelSelector != "" {
		a.LabelSelector, a.LabelSelectorErr = authorizer.ParseLabelSelector(info.LabelSelector)
	}
	return a, true
}
