package request

import (
	"strings"
	"testing"
)

// TestLowerMethod: lowerMethod answers as strings.ToLower, and without an
// allocation for the usual methods.
func TestLowerMethod(t *testing.T) {
	for _, m := range []string{"GET", "PUT", "POST", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE", "get", "Get", "gEt", "", "WATCH", "PROPFIND"} {
		if got, want := lowerMethod(m), strings.ToLower(m); got != want {
			t.Errorf("lowerMethod(%q) = %q, want %q", m, got, want)
		}
	}
	for _, m := range []string{"GET", "PUT", "POST", "PATCH", "DELETE"} {
		if n := testing.AllocsPerRun(100, func() { _ = lowerMethod(m) }); n != 0 {
			t.Errorf("lowerMethod(%q): %v allocations, want 0", m, n)
		}
	}
}
