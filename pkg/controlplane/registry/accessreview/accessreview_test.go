package accessreview

import (
	"context"
	"errors"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestValidateSubjectAccessReviewSpec(t *testing.T) {
	ra := &authorizationv1.ResourceAttributes{}
	tests := []struct {
		name string
		spec authorizationv1.SubjectAccessReviewSpec
		want string // "" = valid
	}{
		{"resource", authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: ra, User: "me"}, ""},
		{"non-resource with a group", authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{}, Groups: []string{"g"}}, ""},
		{"raw field selector, unparsable", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "***foo"}}}, ""},
		{"unknown label operator", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "fake", Values: []string{"v"}}}}}}, ""},
		// "neither" and "both": kube-apiserver v1.37.2's answers (its
		// internal NonResourceAttributes print without JSON tags).
		{"neither", authorizationv1.SubjectAccessReviewSpec{User: "me"}, "spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"},
		{"both", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: ra, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/x", Verb: "get"}},
			`spec: Invalid value: {"Path":"/x","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{"no subject", authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: ra}, `spec.user: Invalid value: "": at least one of user or group must be specified`},
		{"field selector both", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "foo", Requirements: []metav1.FieldSelectorRequirement{{}}}}}, `spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "foo": may not specified at the same time as requirements`},
		{"field selector neither", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{FieldSelector: &authorizationv1.FieldSelectorAttributes{}}}, `spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required`},
		{"field selector no key", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{FieldSelector: &authorizationv1.FieldSelectorAttributes{Requirements: []metav1.FieldSelectorRequirement{{}}}}}, `spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified`},
		{"label selector in without values", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn}}}}}, "spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
		{"label selector neither", authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{LabelSelector: &authorizationv1.LabelSelectorAttributes{}}}, `spec.resourceAttributes.labelSelector.requirements: Required value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, errs := range map[string][]error{
				"SubjectAccessReview":      errsOf(ValidateSubjectAccessReview(&authorizationv1.SubjectAccessReview{Spec: tt.spec}).ToAggregate()),
				"LocalSubjectAccessReview": localErrs(tt.spec),
			} {
				switch {
				case tt.want == "" && len(errs) > 0:
					t.Errorf("%s: got %v, want valid", kind, errs)
				case tt.want != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.want)):
					t.Errorf("%s: got %v, want %q", kind, errs, tt.want)
				}
			}
		})
	}
}

// localErrs validates spec as a LocalSubjectAccessReview of its own
// namespace (nonResourceAttributes are refused after the spec's errors).
func localErrs(spec authorizationv1.SubjectAccessReviewSpec) []error {
	out := errsOf(ValidateLocalSubjectAccessReview(&authorizationv1.LocalSubjectAccessReview{Spec: spec}).ToAggregate())
	if spec.NonResourceAttributes != nil && spec.ResourceAttributes == nil && len(out) == 1 {
		return nil // the only error is the local review's own refusal
	}
	return out
}

func TestValidateMetadataAndNamespaces(t *testing.T) {
	spec := authorizationv1.SubjectAccessReviewSpec{User: "me", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns"}}
	tests := []struct {
		name string
		errs []error
		want string
	}{
		{"sar with a name", errsOf(ValidateSubjectAccessReview(&authorizationv1.SubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: spec}).ToAggregate()), "metadata: Invalid value"},
		{"ssar with a label", errsOf(ValidateSelfSubjectAccessReview(&authorizationv1.SelfSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: spec.ResourceAttributes}}).ToAggregate()), "must be empty"},
		{"lsar in another namespace", errsOf(ValidateLocalSubjectAccessReview(&authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "other"}, Spec: spec}).ToAggregate()), `spec.resourceAttributes.namespace: Invalid value: "ns": must match metadata.namespace`},
		{"lsar with a name", errsOf(ValidateLocalSubjectAccessReview(&authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}, Spec: spec}).ToAggregate()), "must be empty except for namespace"},
		{"lsar non-resource", errsOf(ValidateLocalSubjectAccessReview(&authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "me", NonResourceAttributes: &authorizationv1.NonResourceAttributes{}}}).ToAggregate()), `spec.nonResourceAttributes: Invalid value: {"Path":"","Verb":""}: disallowed on this kind of request`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.errs) != 1 || !strings.Contains(tt.errs[0].Error(), tt.want) {
				t.Errorf("got %v, want one error %q", tt.errs, tt.want)
			}
		})
	}
	if errs := ValidateLocalSubjectAccessReview(&authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}, Spec: spec}); len(errs) != 0 {
		t.Errorf("got %v for a valid local review with managed fields, want none", errs)
	}
}

// fixed answers a fixed decision, and records what it was asked.
type fixed struct {
	d      authorizer.Decision
	reason string
	err    error
	got    *authorizer.Attributes
}

func (f *fixed) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	*f.got = a
	return f.d, f.reason, f.err
}

func TestDecisions(t *testing.T) {
	alice := &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}
	anon := &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	cms := &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "create", Resource: "configmaps"}
	healthz := &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}
	tests := []struct {
		name   string
		authz  authorizer.Authorizer // nil: interim
		caller *user.Info
		spec   authorizationv1.SubjectAccessReviewSpec // user/groups used by SAR/LSAR, attributes by all
		want   authorizationv1.SubjectAccessReviewStatus
	}{
		{"interim, authenticated", nil, alice, authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: alice.Groups, ResourceAttributes: cms}, authorizationv1.SubjectAccessReviewStatus{Allowed: true}},
		{"interim, anonymous on configmaps", nil, anon, authorizationv1.SubjectAccessReviewSpec{User: anon.Name, Groups: anon.Groups, ResourceAttributes: cms}, authorizationv1.SubjectAccessReviewStatus{}},
		{"interim, anonymous on healthz", nil, anon, authorizationv1.SubjectAccessReviewSpec{User: anon.Name, Groups: anon.Groups, NonResourceAttributes: healthz}, authorizationv1.SubjectAccessReviewStatus{Allowed: true}},
		{"deny with a reason", &fixed{d: authorizer.DecisionDeny, reason: "no way"}, alice, authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: cms}, authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "no way"}},
		{"error", &fixed{d: authorizer.DecisionNoOpinion, err: errors.New("boom")}, alice, authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: cms}, authorizationv1.SubjectAccessReviewStatus{EvaluationError: "boom"}},
		{"allow, selector ignored", &fixed{d: authorizer.DecisionAllow}, alice, authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "list", Resource: "pods",
			FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "a==b==c"},
			LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "fake"}, {Key: "b", Operator: metav1.LabelSelectorOpExists}}}}},
			authorizationv1.SubjectAccessReviewStatus{Allowed: true, EvaluationError: "spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector partially ignored due to parse error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked authorizer.Attributes
			authz := tt.authz
			if f, ok := authz.(*fixed); ok {
				f.got = &asked
			}
			ctx := request.WithUser(context.Background(), tt.caller)
			check := func(kind string, got authorizationv1.SubjectAccessReviewStatus, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				if got != tt.want {
					t.Errorf("%s: got status %+v, want %+v", kind, got, tt.want)
				}
			}
			obj, err := NewSubjectAccessReviewREST(authz).Create(ctx, &authorizationv1.SubjectAccessReview{Spec: tt.spec}, nil, &metav1.CreateOptions{})
			check("SubjectAccessReview", statusOf(obj), err)
			if _, ok := authz.(*fixed); ok && (asked.User.Name != tt.spec.User || asked.ResourceRequest != (tt.spec.ResourceAttributes != nil)) {
				t.Errorf("got attributes %+v, want the spec's user and attributes", asked)
			}
			obj, err = NewSelfSubjectAccessReviewREST(authz).Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: tt.spec.ResourceAttributes, NonResourceAttributes: tt.spec.NonResourceAttributes}}, nil, &metav1.CreateOptions{})
			check("SelfSubjectAccessReview", statusOf(obj), err)
			if _, ok := authz.(*fixed); ok && asked.User != tt.caller {
				t.Errorf("got user %+v, want the caller", asked.User)
			}
			if tt.spec.ResourceAttributes != nil {
				lctx := request.WithNamespace(ctx, "ns")
				obj, err = NewLocalSubjectAccessReviewREST(authz).Create(lctx, &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: tt.spec}, nil, &metav1.CreateOptions{})
				check("LocalSubjectAccessReview", statusOf(obj), err)
			}
		})
	}
}

func statusOf(obj any) authorizationv1.SubjectAccessReviewStatus {
	switch o := obj.(type) {
	case *authorizationv1.SubjectAccessReview:
		return o.Status
	case *authorizationv1.SelfSubjectAccessReview:
		return o.Status
	case *authorizationv1.LocalSubjectAccessReview:
		return o.Status
	}
	return authorizationv1.SubjectAccessReviewStatus{}
}

func TestCreateErrors(t *testing.T) {
	alice := request.WithUser(context.Background(), &user.Info{Name: "alice"})
	spec := authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns"}}
	tests := []struct {
		name   string
		create func() error
		check  func(error) bool
		want   string
	}{
		{"invalid sar", func() error {
			_, err := NewSubjectAccessReviewREST(nil).Create(alice, &authorizationv1.SubjectAccessReview{}, nil, nil)
			return err
			// kube-apiserver v1.37.2 names no kind (its registry's internal
			// object has none after decoding).
		}, apierrors.IsInvalid, `.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of`},
		{"lsar without namespace", func() error {
			_, err := NewLocalSubjectAccessReviewREST(nil).Create(alice, &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{}}}, nil, nil)
			return err
		}, apierrors.IsBadRequest, "namespace is required on this type"},
		{"lsar in another namespace than the request's", func() error {
			_, err := NewLocalSubjectAccessReviewREST(nil).Create(request.WithNamespace(alice, "other"), &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: spec}, nil, nil)
			return err
		}, apierrors.IsBadRequest, "spec.resourceAttributes.namespace must match namespace: other"},
		{"ssar without a user", func() error {
			_, err := NewSelfSubjectAccessReviewREST(nil).Create(context.Background(), &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: spec.ResourceAttributes}}, nil, nil)
			return err
		}, apierrors.IsBadRequest, "no user present on request"},
		{"ssrr without namespace", func() error {
			_, err := NewSelfSubjectRulesReviewREST(nil).Create(alice, &authorizationv1.SelfSubjectRulesReview{}, nil, nil)
			return err
		}, apierrors.IsBadRequest, "no namespace on request"},
		{"admission refuses", func() error {
			_, err := NewSubjectAccessReviewREST(nil).Create(alice, &authorizationv1.SubjectAccessReview{Spec: spec}, func(context.Context, runtimeObject) error {
				return apierrors.NewForbidden(authorizationv1.Resource("subjectaccessreviews"), "", errors.New("no"))
			}, nil)
			return err
		}, apierrors.IsForbidden, "no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.create()
			if !tt.check(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRules(t *testing.T) {
	tests := []struct {
		name           string
		rules          RuleResolver
		caller         *user.Info
		wantResources  string
		wantNonRes     string
		wantIncomplete bool
		wantErr        string
	}{
		{"interim, authenticated", RulesOf(nil), &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}},
			"[{[*] [*] [*] []}]", "[{[*] [*]}]", false, ""},
		{"interim, anonymous", RulesOf(interim.Authorizer{}), &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}},
			"[]", "[{[get head] [/healthz /healthz/* /livez /livez/* /readyz /readyz/* /version /version/]}]", false, ""},
		{"an authorizer without rules", RulesOf(&fixed{}), &user.Info{Name: "alice"},
			"[]", "[]", true, "authorizer does not support user rule resolution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := NewSelfSubjectRulesReviewREST(tt.rules).Create(request.WithUser(context.Background(), tt.caller),
				&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, nil, &metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := obj.(*authorizationv1.SelfSubjectRulesReview).Status
			if got := fmtRules(st.ResourceRules); got != tt.wantResources {
				t.Errorf("got resource rules %s, want %s", got, tt.wantResources)
			}
			if got := fmtRules(st.NonResourceRules); got != tt.wantNonRes {
				t.Errorf("got non-resource rules %s, want %s", got, tt.wantNonRes)
			}
			if st.Incomplete != tt.wantIncomplete || st.EvaluationError != tt.wantErr {
				t.Errorf("got incomplete=%v error=%q, want %v %q", st.Incomplete, st.EvaluationError, tt.wantIncomplete, tt.wantErr)
			}
		})
	}
}
