package filters

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
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
	info, ok := request.RequestInfoFrom(r.Context())
	if !ok {
		return authorizer.Attributes{}, errNoRequestInfo
	}
	u, _ := request.UserFrom(r.Context())
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
	// The request info carries a list, watch or deletecollection's
	// selectors; an unparsable one is recorded as an error with no
	// requirements (the handler refuses the request), as upstream's
	// GetAuthorizerAttributes.
	if info.FieldSelector != "" {
		a.FieldSelector, a.FieldSelectorErr = authorizer.ParseFieldSelector(info.FieldSelector)
	}
	if info.LabelSelector != "" {
		a.LabelSelector, a.LabelSelectorErr = authorizer.ParseLabelSelector(info.LabelSelector)
	}
	return a, nil
}

// WithAuthorization lets a request through only if authz allows it
// (serving.md 30). Allow wins over an error; an error without allow answers
// 500; anything else answers 403 with upstream's forbidden Status. The
// decision is recorded as audit annotations. A nil authz disables the
// filter.
func WithAuthorization(handler http.Handler, authz authorizer.Authorizer, logger *slog.Logger) http.Handler {
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
		decision, reason, err := authz.Authorize(ctx, attrs)
		if decision == authorizer.DecisionAllow {
			audit.AddAnnotation(ctx, DecisionAnnotationKey, decisionAllow)
			audit.AddAnnotation(ctx, ReasonAnnotationKey, reason)
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
		responsewriters.WriteStatusAudited(w, r, Forbidden(attrs, reason))
	})
}

// Forbidden is the 403 Status upstream answers for a denied request.
func Forbidden(a authorizer.Attributes, reason string) *metav1.Status {
	msg := htmlSanitizer.Replace(forbiddenMessage(a))
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return &apierrors.NewForbidden(gr, a.Name, errors.New(msg)).ErrStatus
}

func forbiddenMessage(a authorizer.Attributes) string {
	name := ""
	if a.User != nil {
		name = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, res, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, res, a.APIGroup)
}
