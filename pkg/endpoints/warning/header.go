package warning

import (
	"log/slog"
	"net/http"
	"sync"
	"unicode/utf8"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Limits of the Warning headers of one response (serving.md 28): past
// totalRunes runes in total, every warning is cut to itemRunes runes.
const (
	totalRunes = 4 * 1024
	itemRunes  = 256
)

// HeaderRecorder writes each warning as a `Warning: 299 <agent> "<text>"`
// header. Repeated texts are sent once. Once the texts exceed the total
// limit, every warning, those already written included, is truncated and
// warnings past the limit are dropped. Warnings added after the response
// headers were written are lost, as the header map no longer reaches the
// client.
type HeaderRecorder struct {
	logger *slog.Logger

	mu         sync.Mutex
	header     http.Header
	seen       map[string]bool
	ordered    []recorded
	written    int // runes of warning text in the header
	truncating bool
}

var _ Recorder = (*HeaderRecorder)(nil)

type recorded struct{ agent, text string }

// NewHeaderRecorder returns a Recorder writing to header (the response's).
// A nil logger means slog.Default().
func NewHeaderRecorder(header http.Header, logger *slog.Logger) *HeaderRecorder {
	if logger == nil {
		logger = slog.Default()
	}
	return &HeaderRecorder{header: header, logger: logger}
}

// AddWarning implements Recorder.
func (r *HeaderRecorder) AddWarning(agent, text string) {
	if text == "" {
		return
	}
	if agent == "" {
		agent = "-"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.truncating && r.written >= totalRunes {
		return
	}
	if r.seen[text] {
		return
	}
	if r.seen == nil {
		r.seen = make(map[string]bool)
	}
	r.seen[text] = true
	r.ordered = append(r.ordered, recorded{agent, text})

	n := utf8.RuneCountInString(text)
	if r.truncating && n > itemRunes {
		text, n = truncateRunes(text, itemRunes), itemRunes
	}
	if r.truncating || r.written+n <= totalRunes {
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
		if n > itemRunes {
			t, n = truncateRunes(t, itemRunes), itemRunes
		}
		r.appendLocked(w.agent, t, n)
	}
}

func (r *HeaderRecorder) appendLocked(agent, text string, runes int) {
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
