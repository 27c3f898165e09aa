package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultQueueSize is how many events the log backend buffers before
// ProcessEvents blocks.
const DefaultQueueSize = 10000

// LogBackend writes each event as one JSON line. Events pass through a
// bounded queue to one writer goroutine, so a slow disk slows requests down
// (ProcessEvents blocks while the queue is full) instead of losing events.
//
// Lifecycle: ProcessEvents may be called before Run (events wait in the
// queue); Run starts the writer; Shutdown stops accepting events, waits for
// the writer to write every queued event, flushes and closes the file. An
// event whose ProcessEvents returned true before Shutdown was called is
// always written.
type LogBackend struct {
	logger  *slog.Logger
	metrics *Metrics // events lost: apiserver_audit_error_total{plugin="log"}
	out     flushWriter
	closer  io.Closer // nil when the writer is not ours to close (stdout)
	legacy  bool      // --audit-log-format=legacy: one text line per event

	queue           chan *Event
	shutdownStarted chan struct{} // closed first thing in Shutdown
	done            chan struct{} // closed when the writer goroutine returns

	mu      sync.RWMutex // senders hold R; Shutdown takes W before closing queue
	closed  bool
	started bool

	shutdownOnce sync.Once
}

var _ Backend = (*LogBackend)(nil)

type flushWriter interface {
	io.Writer
	Flush() error
}

// Log formats (--audit-log-format).
const (
	FormatJSON   = "json"
	FormatLegacy = "legacy"
)

// OpenLogBackend opens the audit log at path ("-" means stdout), creating
// its directory (0700) and the file (0600) if needed and appending to it.
func OpenLogBackend(path string, logger *slog.Logger) (*LogBackend, error) {
	return OpenRotatingLogBackend(path, FormatJSON, RotateConfig{}, logger)
}

// OpenRotatingLogBackend is OpenLogBackend with a format (FormatJSON or
// FormatLegacy) and the file rotated by size as rotate says.
func OpenRotatingLogBackend(path, format string, rotate RotateConfig, logger *slog.Logger) (*LogBackend, error) {
	if path == "" {
		return nil, errors.New("audit log path is empty")
	}
	if format != FormatJSON && format != FormatLegacy {
		return nil, fmt.Errorf("invalid audit log format %q, allowed formats are %q", format, FormatJSON+","+FormatLegacy)
	}
	var b *LogBackend
	if path == "-" {
		b = NewLogBackend(os.Stdout, nil, logger)
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create audit log directory: %w", err)
		}
		f, err := openRotatingFile(path, rotate)
		if err != nil {
			return nil, err
		}
		b = newLogBackend(f, f, logger)
	}
	b.legacy = format == FormatLegacy
	return b, nil
}

// NewLogBackend returns a backend writing to w. closer, if not nil, is
// closed by Shutdown after the last write. logger nil means slog.Default().
func NewLogBackend(w io.Writer, closer io.Closer, logger *slog.Logger) *LogBackend {
	return newLogBackend(bufio.NewWriterSize(w, 64<<10), closer, logger)
}

func newLogBackend(out flushWriter, closer io.Closer, logger *slog.Logger) *LogBackend {
	if logger == nil {
		logger = slog.Default()
	}
	return &LogBackend{
		logger:          logger,
		out:             out,
		closer:          closer,
		queue:           make(chan *Event, DefaultQueueSize),
		shutdownStarted: make(chan struct{}),
		done:            make(chan struct{}),
	}
}

// SetMetrics makes the backend count the events it loses (encoding or
// writing failures, events refused after Shutdown) in m's
// apiserver_audit_error_total{plugin="log"}. Call it before Run and before
// any event is processed. The error count starts at 0 (upstream creates
// it on the first error) so that dashboards see the series from the start.
func (b *LogBackend) SetMetrics(m *Metrics) {
	b.metrics = m
	m.PluginError(PluginLog, 0)
}

// ProcessEvents queues events for writing, blocking while the queue is full.
// It returns false, dropping the rest, once Shutdown has begun.
func (b *LogBackend) ProcessEvents(events ...*Event) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.metrics.PluginError(PluginLog, len(events))
		return false
	}
	for i, ev := range events {
		select {
		case b.queue <- ev:
		case <-b.shutdownStarted:
			b.metrics.PluginError(PluginLog, len(events)-i)
			return false
		}
	}
	return true
}

// Run starts the writer goroutine and returns at once. The writer runs until
// Shutdown; stopCh is accepted for the Backend contract but does not stop
// it, so that events of requests finishing after the drain are not lost.
func (b *LogBackend) Run(stopCh <-chan struct{}) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("audit log backend: Run after Shutdown")
	}
	if b.started {
		return errors.New("audit log backend: Run called twice")
	}
	b.started = true
	go b.writeLoop()
	return nil
}

// Shutdown stops accepting events, writes every queued one, and closes the
// file. It is idempotent and blocks until done.
func (b *LogBackend) Shutdown() {
	b.shutdownOnce.Do(func() {
		close(b.shutdownStarted) // unblocks senders waiting on a full queue
		b.mu.Lock()
		b.closed = true
		close(b.queue) // no sender can be inside ProcessEvents now
		started := b.started
		b.mu.Unlock()
		if started {
			<-b.done
		} else {
			b.writeLoop()
		}
		if b.closer != nil {
			if err := b.closer.Close(); err != nil {
				b.logger.Error("close audit log", "err", err)
			}
		}
	})
}

// writeLoop writes queued events until the queue is closed, flushing
// whenever the queue runs empty.
func (b *LogBackend) writeLoop() {
	defer close(b.done)
	for ev := range b.queue {
		b.write(ev)
		if len(b.queue) == 0 {
			b.flush()
		}
	}
	b.flush()
}

func (b *LogBackend) write(ev *Event) {
	if b.legacy {
		if _, err := io.WriteString(b.out, EventString(ev)+"\n"); err != nil {
			b.metrics.PluginError(PluginLog, 1)
			b.logger.Error("write audit event", "auditID", ev.AuditID, "err", err)
		}
		return
	}
	line, err := json.Marshal(ev)
	if err != nil {
		b.metrics.PluginError(PluginLog, 1)
		b.logger.Error("encode audit event", "auditID", ev.AuditID, "err", err)
		return
	}
	line = append(line, '\n')
	if _, err := b.out.Write(line); err != nil {
		b.metrics.PluginError(PluginLog, 1)
		b.logger.Error("write audit event", "auditID", ev.AuditID, "err", err)
	}
}

func (b *LogBackend) flush() {
	if err := b.out.Flush(); err != nil {
		b.logger.Error("flush audit log", "err", err)
	}
}

// EventString is the legacy text form of an event (--audit-log-format=legacy),
// as upstream's apiserver/pkg/audit EventString.
func EventString(ev *Event) string {
	user, groups := "<none>", "<none>"
	if ev.User.Username != "" {
		user = ev.User.Username
		if len(ev.User.Groups) > 0 {
			groups = quoteAll(ev.User.Groups)
		}
	}
	as, asGroups := "<self>", "<lookup>"
	if ev.ImpersonatedUser != nil {
		as = ev.ImpersonatedUser.Username
		if ev.ImpersonatedUser.Groups != nil {
			asGroups = quoteAll(ev.ImpersonatedUser.Groups)
		}
	}
	namespace := "<none>"
	if ev.ObjectRef != nil && ev.ObjectRef.Namespace != "" {
		namespace = ev.ObjectRef.Namespace
	}
	response := "<deferred>"
	if ev.ResponseStatus != nil {
		response = strconv.Itoa(int(ev.ResponseStatus.Code))
	}
	ip := "<unknown>"
	if len(ev.SourceIPs) > 0 {
		ip = ev.SourceIPs[0]
	}
	return fmt.Sprintf("%s AUDIT: id=%q stage=%q ip=%q method=%q user=%q groups=%q as=%q asgroups=%q user-agent=%q namespace=%q uri=%q response=\"%s\"",
		ev.RequestReceivedTimestamp.Format(time.RFC3339Nano), ev.AuditID, ev.Stage, ip, ev.Verb, user, groups, as, asGroups, ev.UserAgent, namespace, ev.RequestURI, response)
}

func quoteAll(in []string) string {
	q := make([]string, len(in))
	for i, s := range in {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ",")
}
