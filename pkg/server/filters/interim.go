package filters

import (
	"context"
	"strings"
)

// InterimAuthorizer is the authorizer until real authorization exists (issue
// 2, point 7): every authenticated user may do everything; an anonymous one
// may only GET (or HEAD) /healthz, /livez, /readyz (and their sub-paths) and
// /version (and /version/). Everything else gets no opinion, which the
// filter answers with 403.
type InterimAuthorizer struct{}

var _ Authorizer = InterimAuthorizer{}

// Authorize implements Authorizer.
func (InterimAuthorizer) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if !isAnonymous(a.User) {
		return DecisionAllow, "", nil
	}
	if !a.ResourceRequest && (a.Verb == "get" || a.Verb == "head") && publicPath(a.Path) {
		return DecisionAllow, "", nil
	}
	return DecisionNoOpinion, "", nil
}

func publicPath(p string) bool {
	for _, root := range []string{"/healthz", "/livez", "/readyz"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return p == "/version" || p == "/version/"
}
