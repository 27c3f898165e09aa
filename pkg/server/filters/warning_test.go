package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWithWarningRecorder(t *testing.T) {
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
			h := WithWarningRecorder(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for _, s := range tt.texts {
					AddWarning(r.Context(), s)
				}
			}), discard())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			got := rec.Header().Values("Warning")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %d warnings %q, want %d %q", len(got), trunc(got), len(tt.want), trunc(tt.want))
			}
		})
	}
}

func TestAddWarningOutsideRecorder(t *testing.T) {
	AddWarning(httptest.NewRequest("GET", "/", nil).Context(), "nobody listens") // must not panic
}

func TestTruncateRunes(t *testing.T) {
	if got := truncateRunes("héllo", 2); got != "hé" || !utf8.ValidString(got) {
		t.Errorf("got %q, want hé", got)
	}
	if got := truncateRunes("hi", 5); got != "hi" {
		t.Errorf("got %q, want hi", got)
	}
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
