package handlers

import "testing"

// TestJoinMediaType: joinMediaType is mimeType + "/" + mimeSubType, without
// an allocation for the media types served.
func TestJoinMediaType(t *testing.T) {
	for _, c := range [][2]string{
		{"application", "json"}, {"application", "yaml"}, {"application", "vnd.kubernetes.protobuf"},
		{"application", "xml"}, {"text", "json"}, {"*", "*"}, {"application", "*"}, {"", ""},
		{"application", "json;stream=watch"}, {"Application", "JSON"},
	} {
		if got, want := joinMediaType(c[0], c[1]), c[0]+"/"+c[1]; got != want {
			t.Errorf("joinMediaType(%q, %q) = %q, want %q", c[0], c[1], got, want)
		}
	}
	for _, sub := range []string{"json", "yaml", "vnd.kubernetes.protobuf"} {
		if n := testing.AllocsPerRun(100, func() { _ = joinMediaType("application", sub) }); n != 0 {
			t.Errorf("joinMediaType(application, %s): %v allocations, want 0", sub, n)
		}
	}
}
