package interim

import (
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func TestAuthorize(t *testing.T) {
	anonymous := &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	unauthenticated := &user.Info{Name: "bob", Groups: []string{user.AllUnauthenticated}}
	alice := &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}
	path := func(u *user.Info, verb, p string) authorizer.Attributes {
		return authorizer.Attributes{User: u, Verb: verb, Path: p}
	}
	tests := []struct {
		name  string
		attrs authorizer.Attributes
		want  authorizer.Decision
	}{
		{"authenticated resource", authorizer.Attributes{User: alice, Verb: "delete", ResourceRequest: true, Resource: "pods", Namespace: "ns", Name: "p"}, authorizer.DecisionAllow},
		{"authenticated path", path(alice, "post", "/anything"), authorizer.DecisionAllow},
		{"anonymous healthz", path(anonymous, "get", "/healthz"), authorizer.DecisionAllow},
		{"anonymous head livez", path(anonymous, "head", "/livez"), authorizer.DecisionAllow},
		{"anonymous readyz sub-path", path(anonymous, "get", "/readyz/etcd"), authorizer.DecisionAllow},
		{"anonymous version", path(anonymous, "get", "/version"), authorizer.DecisionAllow},
		{"anonymous version slash", path(anonymous, "get", "/version/"), authorizer.DecisionAllow},
		{"anonymous version sub-path", path(anonymous, "get", "/version/x"), authorizer.DecisionNoOpinion},
		{"anonymous healthzfoo", path(anonymous, "get", "/healthzfoo"), authorizer.DecisionNoOpinion},
		{"anonymous post healthz", path(anonymous, "post", "/healthz"), authorizer.DecisionNoOpinion},
		{"anonymous api", path(anonymous, "get", "/api"), authorizer.DecisionNoOpinion},
		{"anonymous resource", authorizer.Attributes{User: anonymous, Verb: "get", ResourceRequest: true, Resource: "pods", Path: "/healthz"}, authorizer.DecisionNoOpinion},
		{"no user", path(nil, "get", "/api"), authorizer.DecisionNoOpinion},
		{"no user healthz", path(nil, "get", "/healthz"), authorizer.DecisionAllow},
		{"unauthenticated group", path(unauthenticated, "get", "/api"), authorizer.DecisionNoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, err := Authorizer{}.Authorize(t.Context(), tt.attrs)
			if got != tt.want || reason != "" || err != nil {
				t.Fatalf("got (%v, %q, %v), want (%v, \"\", nil)", got, reason, err, tt.want)
			}
		})
	}
}
