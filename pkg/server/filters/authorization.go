package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// Audit annotation keys and values of the authorization decision.
const (
	DecisionAnnotationKey = "authorization.k8s.io/decision"
	ReasonAnnotationKey   = "authorization.k8s.io/reason"
	decisionAllow         = "allow"
	decisionForbid        = "forbid"
	reasonError           = "internal error"
)

// AttributesFrom builds the Attributes of r from its context.
func AttributesFrom(r *http.Request) (authorizer.Attributes, error) {
	a, ok := request.AuthorizerAttributes(r.Context())
	if !ok {
		return authorizer.Attributes{}, errNoRequestInfo
	}
	return a, nil
}

// WithAuthorization lets a request through only if authz allows it
// (serving.md 30). Allow wins over an error; an error without allow answers
// 500; anything else answers 403 with upstream's forbidden Status. The
// decision is recorded as audit annotations, and (m; nil: not) in the
// authorization metrics; an allowed request of the server's own loopback
// clients (system:apiserver, but not its kube-controller-manager
// controllers) is counted in apiserver_selfrequest_total. A
// nil authz disables the filter.
func WithAuthorization(handler http.Handler, authz authorizer.Authorizer, logger *slog.Logger, m *metrics.AuthMetrics) http.Handler {
	if authz == nil {
		return handler
	}
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		attrs, err := AttributesFrom(r)
		if err != nil {
			internalError(w, r, err, logger)
			return
		}
		start := time.Now()
		decision, reason, err := authz.Authorize(ctx, attrs)
		m.Authorization(authorizationResult(decision, err), time.Since(start))
		if decision == authorizer.DecisionAllow {
			audit.AddAnnotation(ctx, DecisionAnnotationKey, decisionAllow)
			audit.AddAnnotation(ctx, ReasonAnnotationKey, reason)
			// Handlers authorize a create that an update or patch turns
			// into with the same authorizer.
			if !request.StateOf(ctx).SetAuthorizer(authz) {
				r = r.WithContext(request.WithAuthorizer(ctx, authz))
			}
			if attrs.User != nil && attrs.User.Name == user.APIServerUser &&
				!strings.HasPrefix(r.UserAgent(), ControllerManagerUserAgentPrefix) {
				info, _ := request.RequestInfoFrom(ctx)
				m.SelfRequest(r, info)
			}
			handler.ServeHTTP(w, r)
			return
		}
		if err != nil {
			audit.AddAnnotation(ctx, ReasonAnnotationKey, reasonError)
			internalError(w, r, fmt.Errorf("authorize: %w", err), logger)
			return
		}
		logger.Debug("forbidden", "URI", r.RequestURI, "reason", reason)
		audit.AddAnnotation(ctx, DecisionAnnotationKey, decisionForbid)
		audit.AddAnnotation(ctx, ReasonAnnotationKey, reason)
		handlers.WriteStatusNegotiatedNoSniff(w, r, authorizer.ForbiddenStatus(attrs, reason))
	})
}

// Forbidden is the 403 Status upstream answers for a denied request.
func Forbidden(a authorizer.Attributes, reason string) *metav1.Status {
	return authorizer.ForbiddenStatus(a, reason)
}

// authorizationResult is upstream's result label of a decision: allow wins
// over an error, which wins over deny and no opinion.
func authorizationResult(d authorizer.Decision, err error) string {
	switch {
	case d == authorizer.DecisionAllow:
		return metrics.AuthzAllowed
	case err != nil:
		return metrics.AuthzError
	case d == authorizer.DecisionDeny:
		return metrics.AuthzDenied
	}
	return metrics.AuthzNoOpinion
}
