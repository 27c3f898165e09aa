package storage

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

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

// SendEvent hands ev to the reader of result, or gives up (false) once
// done is closed. A reader already waiting takes it without a select over
// both channels: with many watchers that select was a visible part of
// what an event cost.
func SendEvent(result chan<- watch.Event, done <-chan struct{}, ev watch.Event) bool {
	select {
	case result <- ev:
		return true
	default:
	}
	select {
	case result <- ev:
		return true
	case <-done:
		return false
	}
}

// ClaimStream reports whether a watch's Stream, rather than its
// ResultChan, delivers the events: the first of the two to run once wins.
func ClaimStream(once *sync.Once) bool {
	claimed := false
	once.Do(func() { claimed = true })
	return claimed
}
