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
	"sync"
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
	out     *bufio.Writer
	closer  io.Closer // nil when the writer is not ours to close (stdout)

	queue           chan *Event
	shutdownStarted chan struct{} // closed first thing in Shutdown
	done            chan struct{} // closed when the writer goroutine returns

	mu      sync.RWMutex // senders hold R; Shutdown takes W before closing queue
	closed  bool
	started bool

	shutdownOnce sync.Once
}

var _ Backend = (*LogBackend)(nil)

// OpenLogBackend opens the audit log at path ("-" means stdout), creating
// its directory (0700) and the file (0600) if needed and appending to it.
func OpenLogBackend(path string, logger *slog.Logger) (*LogBackend, error) {
	if path == "" {
		return nil, errors.New("audit log path is empty")
	}
	if path == "-" {
		return NewLogBackend(os.Stdout, nil, logger), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create audit log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return NewLogBackend(f, f, logger), nil
}

// NewLogBackend returns a backend writing to w. closer, if not nil, is
// closed by Shutdown after the last write. logger nil means slog.Default().
func NewLogBackend(w io.Writer, closer io.Closer, logger *slog.Logger) *LogBackend {
	if logger == nil {
		logger = slog.Default()
	}
	return &LogBackend{
		logger:          logger,
		out:             bufio.NewWriterSize(w, 64<<10),
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
