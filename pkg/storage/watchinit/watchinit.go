// Package watchinit carries a watch's initialization signal from the
// filter that admitted the request (API Priority and Fairness) down to the
// storage that serves the watch, as upstream's
// utilflowcontrol.WatchInitialized: a watch occupies a seat of its
// priority level until its initial events have been handed over, not for
// its whole life.
package watchinit

import "context"

type signalKey struct{}

// WithSignal returns a context whose watch, once initialized, calls f. f
// may be called more than once (from storage and again when the handler
// returns): it must be idempotent.
func WithSignal(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, signalKey{}, f)
}

// Initialized tells whoever admitted the watch served with ctx that its
// initial events have been sent. It does nothing for a context without a
// signal.
func Initialized(ctx context.Context) {
	if f, ok := ctx.Value(signalKey{}).(func()); ok {
		f()
	}
}
