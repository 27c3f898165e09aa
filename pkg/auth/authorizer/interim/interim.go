package interim

import (
	"context"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
)

// Authorizer is the authorizer until real authorization exists (issue 2,
// point 7): every authenticated user may do everything; an anonymous one
// may only GET (or HEAD) /healthz, /livez, /readyz (and their sub-paths)
// and /version (and /version/). Everything else gets no opinion, which the
// filter answers with 403.
type Authorizer struct{}

var _ authorizer.Authorizer = Authorizer{}

// Authorize implements authorizer.Authorizer.
func (Authorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !a.User.IsAnonymous() {
		return authorizer.DecisionAllow, "", nil
	}
	if !a.ResourceRequest && (a.Verb == "get" || a.Verb == "head") && publicPath(a.Path) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func publicPath(p string) bool {
	for _, root := range []string{"/healthz", "/livez", "/readyz"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return p == "/version" || p == "/version/"
}
