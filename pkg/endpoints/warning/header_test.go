package warning

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestHeaderRecorder(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	tests := []struct {
		name  string
		texts []string
		want  []string
	}{
		{"one", []string{"deprecated"}, []string{`299 - "deprecated"`}},
		{"dedupe and skip empty", []string{"a", "", "b", "a"}, []string{`299 - "a"`, `299 - "b"`}},
		{"quotes escaped", []string{`say "hi" \o/`}, []string{`299 - "say \"hi\" \\o/"`}},
		{"within the total limit", []string{long("x", 4000), "y"}, []string{`299 - "` + long("x", 4000) + `"`, `299 - "y"`}},
		{"over the limit truncates all", []string{long("x", 300), long("é", 4000)},
			[]string{`299 - "` + long("x", 256) + `"`, `299 - "` + long("é", 256) + `"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := http.Header{}
			ctx := WithRecorder(context.Background(), NewHeaderRecorder(header, discard()))
			for _, s := range tt.texts {
				AddWarning(ctx, s)
			}
			got := header.Values("Warning")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %d warnings %q, want %d %q", len(got), trunc(got), len(tt.want), trunc(tt.want))
			}
		})
	}
}

func TestHeaderRecorderAgent(t *testing.T) {
	header := http.Header{}
	r := NewHeaderRecorder(header, discard())
	r.AddWarning("", "from us")
	r.AddWarning("webhook.example.com", "from a webhook")
	want := []string{`299 - "from us"`, `299 webhook.example.com "from a webhook"`}
	if got := header.Values("Warning"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAddWarningOutsideRecorder(t *testing.T) {
	AddWarning(context.Background(), "nobody listens") // must not panic
}

// recording is a Recorder that keeps what it gets.
type recording []string

func (r *recording) AddWarning(agent, text string) { *r = append(*r, agent+"|"+text) }

func TestAddWarningGoesToTheContextRecorder(t *testing.T) {
	var got recording
	ctx := WithRecorder(context.Background(), &got)
	AddWarning(ctx, "one")
	AddWarning(ctx, "")
	AddWarning(ctx, "two")
	if want := []string{"|one", "|two"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTruncateRunes(t *testing.T) {
	if got := truncateRunes("héllo", 2); got != "hé" || !utf8.ValidString(got) {
		t.Errorf("got %q, want hé", got)
	}
	if got := truncateRunes("hi", 5); got != "hi" {
		t.Errorf("got %q, want hi", got)
	}
}

// FuzzHeaderRecorder: warnings from client input (strict decoding errors
// quote the body) never panic, and truncation keeps UTF-8 valid.
func FuzzHeaderRecorder(f *testing.F) {
	f.Add("warn me")
	f.Add("")
	f.Add("\xff\"\\")
	f.Fuzz(func(t *testing.T, warning string) {
		NewHeaderRecorder(http.Header{}, discard()).AddWarning("", warning)
		if got := truncateRunes(warning, 3); utf8.ValidString(warning) && !utf8.ValidString(got) {
			t.Fatalf("truncateRunes broke UTF-8: %q", got)
		}
	})
}

func trunc(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		out[i] = s
	}
	return out
}
