package handlers

import (
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
)

// TestSharedEventIDsShareBytes: the encoders of two watchers with the
// same encoders name an event's kept encoding with the same string data,
// so that a shared object's cache finds it by comparing pointers, not
// ~150 bytes per delivery (sharedID); other types or targets get other
// ids.
func TestSharedEventIDsShareBytes(t *testing.T) {
	newEncoder := func(target *schema.GroupVersionKind) *watchEncoder {
		// Each watcher builds its own objID, as serveWatch does.
		return &watchEncoder{
			objID:        runtime.Identifier(strings.Join([]string{"json", "v1"}, ";")),
			eventEncoder: json.NewSerializerWithOptions(json.DefaultMetaFactory, nil, nil, json.SerializerOptions{}),
			target:       target,
		}
	}
	data := func(id runtime.Identifier) *byte { return unsafe.StringData(string(id)) }
	a, b := newEncoder(nil), newEncoder(nil)
	if data(a.objID) == data(b.objID) {
		t.Fatal("the test's objIDs share their bytes already")
	}
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark} {
		ia, ib := a.sharedEvent(typ).id, b.sharedEvent(typ).id
		if ia != ib || data(ia) != data(ib) {
			t.Errorf("%s: ids %q and %q do not share their bytes", typ, ia, ib)
		}
	}
	if a.sharedEvent(watch.Added).id == a.sharedEvent(watch.Modified).id {
		t.Error("ADDED and MODIFIED share an id")
	}
	target := &schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "PartialObjectMetadata"}
	ma, mb := newEncoder(target), newEncoder(target)
	ia, ib := ma.sharedMetadataEvent(watch.Modified).id, mb.sharedMetadataEvent(watch.Modified).id
	if ia != ib || data(ia) != data(ib) {
		t.Errorf("metadata: ids %q and %q do not share their bytes", ia, ib)
	}
	if ia == a.sharedEvent(watch.Modified).id {
		t.Error("the metadata event and the full event share an id")
	}
}
