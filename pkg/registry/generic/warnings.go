package generic

import "context"

// Warner records warnings for the response of a request (kube's
// warning.Recorder: the REST handler turns them into Warning headers).
type Warner interface {
	// AddWarning records a warning; agent "" means the server.
	AddWarning(agent, text string)
}

type warnerKey struct{}

// WithWarner returns a context whose strategy warnings go to w.
func WithWarner(ctx context.Context, w Warner) context.Context {
	return context.WithValue(ctx, warnerKey{}, w)
}

// AddWarning records text on the context's Warner, if any.
func AddWarning(ctx context.Context, text string) {
	if w, ok := ctx.Value(warnerKey{}).(Warner); ok && w != nil && text != "" {
		w.AddWarning("", text)
	}
}
