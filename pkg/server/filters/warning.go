package filters

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"unicode/utf8"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Limits of the Warning headers of one response (serving.md 28): past
// warningTotalRunes runes in total, every warning is cut to
// warningItemRunes runes.
const (
	warningTotalRunes = 4 * 1024
	warningItemRunes  = 256
)

type warningKey struct{}

// AddWarning adds a `Warning: 299 - "<text>"` header to the response of the
// request ctx belongs to. Repeated texts are sent once. It is a no-op
// outside WithWarningRecorder, for empty text, and once the response headers
// are written.
func AddWarning(ctx context.Context, text string) {
	if rec, ok := ctx.Value(warningKey{}).(*warningRecorder); ok {
		rec.add("-", text)
	}
}

// WithWarningRecorder lets handlers add Warning headers through AddWarning.
// It must sit inside WithTimeout, so that the headers go to the handler's
// own header map.
func WithWarningRecorder(handler http.Handler, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &warningRecorder{header: w.Header(), logger: logger}
		handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), warningKey{}, rec)))
	})
}

type recordedWarning struct{ agent, text string }

type warningRecorder struct {
	logger *slog.Logger

	mu         sync.Mutex
	header     http.Header
	seen       map[string]bool
	ordered    []recordedWarning
	written    int // runes of warning text in the header
	truncating bool
}

func (r *warningRecorder) add(agent, text string) {
	if text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.truncating && r.written >= warningTotalRunes {
		return
	}
	if r.seen[text] {
		return
	}
	if r.seen == nil {
		r.seen = make(map[string]bool)
	}
	r.seen[text] = true
	r.ordered = append(r.ordered, recordedWarning{agent, text})

	n := utf8.RuneCountInString(text)
	if r.truncating && n > warningItemRunes {
		text, n = truncateRunes(text, warningItemRunes), warningItemRunes
	}
	if r.truncating || r.written+n <= warningTotalRunes {
		r.appendLocked(agent, text, n)
		return
	}
	// Over the limit: from now on every warning is truncated, including the
	// ones already sent.
	r.truncating = true
	r.written = 0
	r.header.Del("Warning")
	r.logger.Warn("exceeded max warning header size, truncating")
	for _, w := range r.ordered {
		t, n := w.text, utf8.RuneCountInString(w.text)
		if n > warningItemRunes {
			t, n = truncateRunes(t, warningItemRunes), warningItemRunes
		}
		r.appendLocked(w.agent, t, n)
	}
}

func (r *warningRecorder) appendLocked(agent, text string, runes int) {
	h, err := utilnet.NewWarningHeader(299, agent, text)
	if err != nil {
		return
	}
	r.written += runes
	r.header.Add("Warning", h)
}

func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
