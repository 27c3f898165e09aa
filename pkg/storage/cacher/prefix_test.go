package cacher

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// TestWatchersShareTheirPrefix: cache watchers of the same collection,
// each given its own key string (as every request builds one), hold
// their scope prefix in the same bytes, which the dispatcher compares
// with every event's key; other collections keep their own prefix.
func TestWatchersShareTheirPrefix(t *testing.T) {
	r := storagetest.PodResource(storagetest.Codec())
	c := newMemoryBackend(t, nil).Store(t, r).(*Cacher)
	watch := func(key string) *cacheWatcher {
		t.Helper()
		wi, err := c.Watch(t.Context(), strings.Clone(key), storage.ListOptions{Recursive: true, ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wi.Stop)
		w, ok := wi.(*cacheWatcher)
		if !ok {
			t.Fatalf("watch of %s not served by the cache: %T", key, wi)
		}
		return w
	}
	a, b, o := watch(r.Prefix+"/ns"), watch(r.Prefix+"/ns"), watch(r.Prefix+"/other")
	if a.prefix != r.Prefix+"/ns/" || b.prefix != a.prefix || o.prefix != r.Prefix+"/other/" {
		t.Fatalf("prefixes %q, %q, %q", a.prefix, b.prefix, o.prefix)
	}
	if unsafe.StringData(a.prefix) != unsafe.StringData(b.prefix) {
		t.Error("two watchers of one collection hold their prefix in different bytes")
	}
}
