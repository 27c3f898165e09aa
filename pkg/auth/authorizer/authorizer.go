package authorizer

import (
	"context"

	"k8s.io/apimachinery/pkg/fields"

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
	// FieldSelector is the request's fieldSelector parameter, parsed (nil
	// when absent or invalid), as upstream's GetFieldSelector
	// (AuthorizeWithSelectors, on by default since v1.32). The Node
	// authorizer uses it; RBAC ignores it.
	FieldSelector fields.Requirements
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
