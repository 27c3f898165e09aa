package embedded

import (
	"context"
	"log/slog"
	"math"
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
