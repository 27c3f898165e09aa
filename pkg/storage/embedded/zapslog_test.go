package embedded

import (
	"bytes"
	"errors"
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
