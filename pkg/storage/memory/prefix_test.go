package memory

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// TestWatchersShareTheirPrefix: watchers of the same collection, each
// given its own key string (as every request builds one), hold their
// prefix in the same bytes, which writers compare with every event's key
// under the backend's lock; other collections keep their own prefix.
func TestWatchersShareTheirPrefix(t *testing.T) {
	s := podStore(newTestBackend(t, testConfig()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := func(key string) *watcher {
		t.Helper()
		wi, err := s.Watch(ctx, strings.Clone(key), storage.ListOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wi.Stop)
		return wi.(*watcher)
	}
	a, b, c := watch("/pods/ns"), watch("/pods/ns"), watch("/pods/other")
	if a.prefix != "/pods/ns/" || b.prefix != a.prefix || c.prefix != "/pods/other/" {
		t.Fatalf("prefixes %q, %q, %q", a.prefix, b.prefix, c.prefix)
	}
	if unsafe.StringData(a.prefix) != unsafe.StringData(b.prefix) {
		t.Error("two watchers of /pods/ns/ hold their prefix in different bytes")
	}
}
