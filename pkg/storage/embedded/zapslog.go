package embedded

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewZapLogger returns a zap logger (the logger etcd's server and client
// take) that forwards entries at level min and above to l. Use it for
// clientv3.Config.Logger too, so etcd's logs end up in kapi's slog handler.
func NewZapLogger(l *slog.Logger, min zapcore.Level) *zap.Logger {
	return zap.New(newSlogCore(l, min, nil))
}

func newSlogCore(l *slog.Logger, min zapcore.Level, closing *atomic.Bool) *slogCore {
	if l == nil {
		l = slog.Default()
	}
	return &slogCore{logger: l, min: min, closing: closing}
}

// slogCore is a zapcore.Core writing to a *slog.Logger.
type slogCore struct {
	logger *slog.Logger
	min    zapcore.Level
	attrs  []slog.Attr // from With
	// closing, when set and true, demotes entries to debug: while etcd shuts
	// down it logs every closed listener as an error.
	closing *atomic.Bool
}

func (c *slogCore) Enabled(l zapcore.Level) bool { return l >= c.min }

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	clone := *c
	clone.attrs = append(append([]slog.Attr(nil), c.attrs...), fieldsToAttrs(fields)...)
	return &clone
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	attrs := make([]slog.Attr, 0, len(c.attrs)+len(fields)+1)
	attrs = append(attrs, c.attrs...)
	if e.LoggerName != "" {
		attrs = append(attrs, slog.String("logger", e.LoggerName))
	}
	attrs = append(attrs, fieldsToAttrs(fields)...)
	level := slogLevel(e.Level)
	if c.closing != nil && c.closing.Load() {
		level = slog.LevelDebug
	} else if level == slog.LevelError && transientStartError(e, fields) {
		level = slog.LevelInfo
	}
	c.logger.LogAttrs(context.Background(), level, e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// fieldsToAttrs converts zap fields, in order, with zap's own map encoder so
// every field type (including objects and arrays) is rendered.
func fieldsToAttrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		for k, v := range enc.Fields {
			attrs = append(attrs, slog.Any(k, normalize(v)))
		}
	}
	return attrs
}

// normalize turns the few encoder values slog would print poorly into
// readable ones.
func normalize(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return x.String()
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
	}
	return v
}

// startGuard is etcd's panic and fatal hook. While etcd starts, a panic or
// fatal log entry (etcd's way to give up on data it cannot read) becomes
// an error sent on failed, and the goroutine that logged it exits, so
// Start returns an error instead of the process crashing. Once started,
// entries panic and exit as zap's defaults do.
type startGuard struct {
	starting atomic.Bool
	failed   chan error
}

func newStartGuard() *startGuard {
	g := &startGuard{failed: make(chan error, 1)}
	g.starting.Store(true)
	return g
}

// started gives panics and fatal errors back to etcd.
func (g *startGuard) started() { g.starting.Store(false) }

// OnWrite implements zapcore.CheckWriteHook.
func (g *startGuard) OnWrite(ce *zapcore.CheckedEntry, fields []zapcore.Field) {
	if !g.starting.Load() {
		if ce.Level == zapcore.FatalLevel {
			zapcore.WriteThenFatal.OnWrite(ce, fields)
			return
		}
		zapcore.WriteThenPanic.OnWrite(ce, fields)
		return
	}
	msg := ce.Message
	for _, a := range fieldsToAttrs(fields) {
		msg += " " + a.String()
	}
	select {
	case g.failed <- errors.New(msg):
	default:
	}
	runtime.Goexit()
}

// transientStartError reports entries etcd logs as errors that are known
// to be harmless and to heal by themselves; they are logged at info.
//
// "failed to update storage version ... missing term information": on a
// new data dir, etcd's storage-version monitor runs as soon as the
// cluster version is set, which with kapi's fast election (TickMs 10) is
// before the backend's first commit has written the raft term; the
// monitor tries again every 4 s and then succeeds (etcd v3.7
// etcdserver/version/monitor.go, storage/schema/schema.go). The test
// TestCleanStartLogsNoError checks that the storage version is written.
func transientStartError(e zapcore.Entry, fields []zapcore.Field) bool {
	if e.Message != "failed to update storage version" {
		return false
	}
	for _, f := range fields {
		if err, ok := f.Interface.(error); ok && f.Type == zapcore.ErrorType && strings.Contains(err.Error(), "missing term information") {
			return true
		}
	}
	return false
}
