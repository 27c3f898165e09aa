package controlplane

import (
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/accessreview"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// authorizationGroup is the table of authorization.k8s.io: kubectl auth
// can-i (--list); aggregated servers' delegated authorization. The reviews
// answer with Config.Authorizer's decisions.
var authorizationGroup = apiGroup{name: authorizationv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "subjectaccessreviews", storage: withConfig(func(c Config) rest.Storage { return accessreview.NewSubjectAccessReviewREST(c.Authorizer) })},
		{name: "selfsubjectaccessreviews", storage: withConfig(func(c Config) rest.Storage { return accessreview.NewSelfSubjectAccessReviewREST(c.Authorizer) })},
		{name: "localsubjectaccessreviews", storage: withConfig(func(c Config) rest.Storage { return accessreview.NewLocalSubjectAccessReviewREST(c.Authorizer) })},
		{name: "selfsubjectrulesreviews", storage: withConfig(func(c Config) rest.Storage {
			if c.RuleResolver != nil {
				return accessreview.NewSelfSubjectRulesReviewREST(c.RuleResolver)
			}
			return accessreview.NewSelfSubjectRulesReviewREST(accessreview.RulesOf(c.Authorizer))
		})},
	},
}}}
