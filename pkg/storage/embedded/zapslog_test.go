package embedded

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestZapLogger(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	z := NewZapLogger(l, zap.WarnLevel).With(zap.String("member", "m1"))
	z.Info("dropped")
	z.Warn("slow fdatasync", zap.Duration("took", 1500000000), zap.Error(errors.New("disk")))
	z.Error("failed", zap.Strings("urls", []string{"a", "b"}))

	out := buf.String()
	tests := []struct {
		want string
		in   bool
	}{
		{want: "dropped", in: false},
		{want: `level=WARN msg="slow fdatasync" member=m1 took=1.5s error=disk`, in: true},
		{want: `level=ERROR msg=failed member=m1 urls="[a b]"`, in: true},
	}
	for _, tt := range tests {
		if got := strings.Contains(out, tt.want); got != tt.in {
			t.Errorf("output contains %q: got %v, want %v\noutput:\n%s", tt.want, got, tt.in, out)
		}
	}
}

// TestStartGuard: while etcd starts, its panic and fatal entries become an
// error and end only the goroutine that logged them; once started they
// panic as zap's default does.
func TestStartGuard(t *testing.T) {
	g := newStartGuard()
	lg := zap.New(newSlogCore(slog.New(slog.NewTextHandler(io.Discard, nil)), zap.ErrorLevel, nil), zap.WithPanicHook(g), zap.WithFatalHook(g))
	ended := make(chan bool)
	go func() {
		returned := false
		defer func() { ended <- returned }()
		lg.Fatal("failed to read WAL", zap.String("path", "/x/wal"))
		returned = true
	}()
	if returned := <-ended; returned {
		t.Fatal("Fatal returned to its caller during start")
	}
	select {
	case err := <-g.failed:
		if got := err.Error(); !strings.Contains(got, "failed to read WAL") || !strings.Contains(got, "/x/wal") {
			t.Errorf("got error %q, want the message and its fields", got)
		}
	default:
		t.Fatal("no error reported for a fatal entry during start")
	}

	g.started()
	defer func() {
		if r := recover(); r == nil {
			t.Error("Panic after start did not panic")
		}
	}()
	lg.Panic("after start")
}
