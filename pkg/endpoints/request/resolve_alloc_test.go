package request

import (
	"net/http"
	"slices"
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

// TestSplitPathInto: splitPathInto gives strings.Split's segments of the
// trimmed path, with a capacity of their number, whether they fit the
// buffer or not.
func TestSplitPathInto(t *testing.T) {
	for _, p := range []string{"", "/", "//", "/api", "api", "/api/", "/apis/g/v1/namespaces/ns/things/n/status",
		"/apis/g/v1/namespaces/ns/things/n/status/x/y/z", "/a//b", "a/b/", "///a///", "/api/v1/namespaces/default/pods/p/log",
		"/apis/apps/v1/watch/namespaces/x/deployments/d"} {
		var want []string
		if q := strings.Trim(p, "/"); q != "" {
			want = strings.Split(q, "/")
		}
		var buf [8]string
		got := splitPathInto(p, buf[:0])
		if !slices.Equal(got, want) || (got == nil) != (want == nil) || cap(got) != len(got) {
			t.Errorf("splitPathInto(%q) = %q (cap %d), want %q", p, got, cap(got), want)
		}
	}
}

// TestResolveAllocations: resolving a namespaced custom resource's GET
// takes one allocation (the info and its path's segments).
func TestResolveAllocations(t *testing.T) {
	r := NewResolver()
	req, err := http.NewRequest(http.MethodGet, "https://h/apis/bench.kapi.dev/v1/namespaces/bench/benchthings/t00001", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.Resolve(req); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("Resolve: %v allocations, want 1", n)
	}
}
