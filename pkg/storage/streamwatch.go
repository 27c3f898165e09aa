package storage

import "context"

type streamWatchKey struct{}

// WithStreamedWatch marks a watch's context: its reader will first try
// to take the events by the watch's Stream method, on the reader's own
// goroutine (the watch handler does). A watch that can stream then waits
// for the reader before starting delivery; other watches start it at
// once, as they always did (a watch read on its result channel, or not
// read yet, behaves exactly as before Stream existed).
func WithStreamedWatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamWatchKey{}, true)
}

// StreamedWatch reports whether ctx was marked by WithStreamedWatch.
func StreamedWatch(ctx context.Context) bool {
	v, _ := ctx.Value(streamWatchKey{}).(bool)
	return v
}
