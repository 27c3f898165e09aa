package certificates

import (
	"context"
	"log/slog"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// IsAuthorizedForSignerName reports whether u may do verb on the
// certificates.k8s.io "signers" resource named signerName, or, failing
// that, on "<domain>/*" for the signer's domain (the part before the
// first "/"), as upstream's certauthorization.IsAuthorizedForSignerName.
// Authorizer errors count as not allowed.
func IsAuthorizedForSignerName(ctx context.Context, authz authorizer.Authorizer, u *user.Info, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		decision, reason, err := authz.Authorize(ctx, authorizer.Attributes{
			User:            u,
			Verb:            verb,
			ResourceRequest: true,
			APIGroup:        "certificates.k8s.io",
			APIVersion:      "*",
			Resource:        "signers",
			Name:            name,
		})
		if err != nil {
			slog.Debug("cannot authorize signer", "verb", verb, "name", name, "reason", reason, "err", err)
			continue
		}
		if decision == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}
