package controlplane

import (
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/selfsubjectreview"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/tokenreview"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// authenticationGroup is the table of authentication.k8s.io: kubectl auth
// whoami; aggregated servers' delegated authentication.
var authenticationGroup = apiGroup{name: authenticationv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "selfsubjectreviews", storage: withConfig(func(Config) rest.Storage { return selfsubjectreview.NewREST() })},
		{name: "tokenreviews", storage: withConfig(func(c Config) rest.Storage { return tokenreview.NewREST(c.TokenAuthenticator) })},
	},
}}}
