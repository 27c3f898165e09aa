package warning

import (
	"context"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// Recorder records the warnings of one request. Implementations are safe
// for concurrent use.
type Recorder interface {
	// AddWarning records a warning. agent is the warn-agent of the
	// Warning header; "" means this server ("-").
	AddWarning(agent, text string)
}

type recorderKey struct{}

// WithRecorder returns a context whose warnings go to r.
func WithRecorder(ctx context.Context, r Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// SetRecorder makes r the Recorder of the request of s, on its state (what
// WithRecorder does with a context value); false when s has no room for
// it (or is nil), and then the caller uses WithRecorder.
func SetRecorder(s *request.State, r Recorder) bool {
	return s.SetValue(recorderKey{}, r)
}

// AddWarning records text, from this server, on the Recorder of ctx. It is
// a no-op for empty text and when ctx has no Recorder.
func AddWarning(ctx context.Context, text string) {
	if text == "" {
		return
	}
	if r, ok := ctx.Value(recorderKey{}).(Recorder); ok && r != nil {
		r.AddWarning("", text)
	}
}
