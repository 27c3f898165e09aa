package union

import (
	"context"
	"errors"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Authorizers asks each authorizer in turn; the first Allow or Deny wins.
// No opinion from all gives no opinion, with the reasons joined by "\n"
// and the errors aggregated, as upstream's union.
type Authorizers []authorizer.Authorizer

var _ authorizer.Authorizer = Authorizers(nil)

// Authorize implements authorizer.Authorizer.
func (u Authorizers) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	var (
		reasons []string
		errs    []error
	)
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		switch d {
		case authorizer.DecisionAllow, authorizer.DecisionDeny:
			return d, reason, err
		}
	}
	return authorizer.DecisionNoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
}

// AlwaysAllow allows everything (--authorization-mode=AlwaysAllow).
type AlwaysAllow struct{}

// Authorize implements authorizer.Authorizer.
func (AlwaysAllow) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// RulesFor lists everything, as upstream's alwaysAllowAuthorizer.
func (AlwaysAllow) RulesFor(context.Context, *user.Info, string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}, false, nil
}

// AlwaysDeny denies everything (--authorization-mode=AlwaysDeny).
type AlwaysDeny struct{}

// Authorize implements authorizer.Authorizer.
func (AlwaysDeny) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "Everything is forbidden.", nil
}

// RulesFor lists nothing.
func (AlwaysDeny) RulesFor(context.Context, *user.Info, string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return []authorizationv1.ResourceRule{}, []authorizationv1.NonResourceRule{}, false, nil
}

// PrivilegedGroups allows every member of one of its groups
// (system:masters in front of every chain, as upstream).
type PrivilegedGroups []string

// Authorize implements authorizer.Authorizer.
func (p PrivilegedGroups) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	for _, g := range p {
		if a.User.InGroup(g) {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}
