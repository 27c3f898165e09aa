package authenticator

import (
	"context"
	"slices"
)

type audiencesKey struct{}

// WithAudiences returns ctx carrying the audiences a token must be meant
// for (a TokenReview's spec.audiences; upstream's authenticator.WithAudiences).
func WithAudiences(ctx context.Context, auds []string) context.Context {
	return context.WithValue(ctx, audiencesKey{}, slices.Clone(auds))
}

// AudiencesFrom returns the audiences set with WithAudiences.
func AudiencesFrom(ctx context.Context) ([]string, bool) {
	auds, ok := ctx.Value(audiencesKey{}).([]string)
	return auds, ok
}

// IntersectAudiences returns the audiences in both a and b, in a's order.
func IntersectAudiences(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
