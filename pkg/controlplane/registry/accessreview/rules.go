package accessreview

import (
	"context"
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// RuleResolver lists what a user may do in a namespace (kube's
// authorizer.RuleResolver). An authorizer that can answer implements it
// next to authorizer.Authorizer; selfsubjectrulesreviews use it.
//
// incomplete reports that the lists may miss rules (e.g. an authorizer
// that cannot enumerate its rules, or a rule that failed to evaluate); err
// is reported as status.evaluationError. Implementations must be safe for
// concurrent use.
type RuleResolver interface {
	RulesFor(ctx context.Context, u *user.Info, namespace string) (resourceRules []authorizationv1.ResourceRule, nonResourceRules []authorizationv1.NonResourceRule, incomplete bool, err error)
}

// InterimRules is the RuleResolver of interim.Authorizer: an
// authenticated user may do everything; an anonymous one may only GET (or
// HEAD) the health and version paths.
type InterimRules struct{}

var _ RuleResolver = InterimRules{}

// RulesFor implements RuleResolver.
func (InterimRules) RulesFor(_ context.Context, u *user.Info, _ string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	if u.IsAnonymous() {
		return []authorizationv1.ResourceRule{}, []authorizationv1.NonResourceRule{{
			Verbs: []string{"get", "head"},
			NonResourceURLs: []string{
				"/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*", "/version", "/version/",
			},
		}}, false, nil
	}
	return []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		false, nil
}

// errNoRules is the evaluation error of an authorizer that cannot list
// rules (upstream's webhook authorizer answers the same way).
var errNoRules = errors.New("authorizer does not support user rule resolution")

// noRules answers for authorizers that cannot list rules: nothing, and
// incomplete.
type noRules struct{}

func (noRules) RulesFor(context.Context, *user.Info, string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return nil, nil, true, errNoRules
}

// RulesOf returns the RuleResolver of authz: authz itself if it is one,
// InterimRules for the interim authorizer (and nil), else a resolver that
// answers "incomplete" with no rules.
func RulesOf(authz authorizer.Authorizer) RuleResolver {
	switch a := authz.(type) {
	case RuleResolver:
		return a
	case nil, interim.Authorizer, *interim.Authorizer:
		return InterimRules{}
	default:
		return noRules{}
	}
}

// SelfSubjectRulesReviewREST answers selfsubjectrulesreviews: what may the
// requesting user do in spec.namespace (kubectl auth can-i --list)?
type SelfSubjectRulesReviewREST struct{ rules RuleResolver }

// NewSelfSubjectRulesReviewREST answers with rules (nil: InterimRules).
func NewSelfSubjectRulesReviewREST(rules RuleResolver) *SelfSubjectRulesReviewREST {
	if rules == nil {
		rules = InterimRules{}
	}
	return &SelfSubjectRulesReviewREST{rules: rules}
}

var (
	_ rest.Creater              = (*SelfSubjectRulesReviewREST)(nil)
	_ rest.Scoper               = (*SelfSubjectRulesReviewREST)(nil)
	_ rest.SingularNameProvider = (*SelfSubjectRulesReviewREST)(nil)
)

// New returns an empty SelfSubjectRulesReview.
func (*SelfSubjectRulesReviewREST) New() runtime.Object {
	return &authorizationv1.SelfSubjectRulesReview{}
}

// Destroy does nothing: nothing is held.
func (*SelfSubjectRulesReviewREST) Destroy() {}

// NamespaceScoped is false.
func (*SelfSubjectRulesReviewREST) NamespaceScoped() bool { return false }

// GetSingularName is "selfsubjectrulesreview".
func (*SelfSubjectRulesReviewREST) GetSingularName() string { return "selfsubjectrulesreview" }

// Create answers the rules of the request's user in spec.namespace
// (required, as upstream: 400 "no namespace on request"). As upstream, the
// answer is a new review holding only the status: the spec is not echoed.
func (r *SelfSubjectRulesReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	ssrr, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectRulesReview: %T", obj))
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if ssrr.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	if err := runCreateValidation(ctx, obj, createValidation); err != nil {
		return nil, err
	}
	resourceRules, nonResourceRules, incomplete, err := r.rules.RulesFor(ctx, u, ssrr.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    resourceRules,
		NonResourceRules: nonResourceRules,
		Incomplete:       incomplete,
	}}
	// Both lists are required in the API: never null.
	if out.Status.ResourceRules == nil {
		out.Status.ResourceRules = []authorizationv1.ResourceRule{}
	}
	if out.Status.NonResourceRules == nil {
		out.Status.NonResourceRules = []authorizationv1.NonResourceRule{}
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}
