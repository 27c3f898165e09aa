package authorizer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Decision is an authorizer's answer.
type Decision int

// Decisions, as upstream numbers them.
const (
	DecisionDeny Decision = iota
	DecisionAllow
	DecisionNoOpinion
)

// Attributes describe the request being authorized.
type Attributes struct {
	User            *user.Info
	Verb            string
	ResourceRequest bool
	// Resource requests.
	Namespace   string
	APIGroup    string
	APIVersion  string
	Resource    string
	Subresource string
	Name        string
	// FieldSelector and LabelSelector are the selectors the request is
	// limited to, parsed, as upstream's GetFieldSelector and
	// GetLabelSelector (AuthorizeWithSelectors, GA in v1.34): from a
	// list, watch or deletecollection's query, a SubjectAccessReview's
	// resourceAttributes, or a CEL authorization check. Nil when absent.
	// Selectors only narrow a request, so an authorizer may use whatever
	// requirements parsed even when an error is set (a part did not
	// parse). The Node authorizer and the webhook use them; RBAC ignores
	// them.
	FieldSelector    fields.Requirements
	FieldSelectorErr error
	LabelSelector    labels.Requirements
	LabelSelectorErr error
	// Non-resource requests.
	Path string
}

// Authorizer decides whether a request may proceed. reason explains the
// decision (the filter appends it to the 403 message and records it in the
// audit annotation). An authorizer may return an error together with Allow,
// which then wins; an error with any other decision is an evaluation error.
// Implementations are safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// ParseFieldSelector parses a raw field selector as upstream's
// authorization attributes do: no requirements is nil.
func ParseFieldSelector(raw string) (fields.Requirements, error) {
	sel, err := fields.ParseSelector(raw)
	if err != nil {
		return nil, err
	}
	if reqs := sel.Requirements(); len(reqs) > 0 {
		return reqs, nil
	}
	return nil, nil
}

// ParseLabelSelector is ParseFieldSelector for label selectors; the
// requirements come sorted by key (labels.Parse), as upstream's request
// filter and SubjectAccessReviews give them. (Its CEL library keeps the
// written order: labels.ParseToRequirements.)
func ParseLabelSelector(raw string) (labels.Requirements, error) {
	sel, err := labels.Parse(raw)
	if err != nil {
		return nil, err
	}
	if reqs, _ := sel.Requirements(); len(reqs) > 0 {
		return reqs, nil
	}
	return nil, nil
}

// htmlSanitizer keeps a message from looking like HTML (quotes are fine),
// as upstream's responsewriters.
var htmlSanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// ForbiddenStatus is the 403 Status upstream answers for a denied request
// (k8s.io/apiserver responsewriters.ForbiddenStatusError): it names the
// object when the attributes do.
func ForbiddenStatus(a Attributes, reason string) *metav1.Status {
	msg := htmlSanitizer.Replace(forbiddenMessage(a))
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return &apierrors.NewForbidden(gr, a.Name, errors.New(msg)).ErrStatus
}

func forbiddenMessage(a Attributes) string {
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
