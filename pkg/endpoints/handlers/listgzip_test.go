package handlers

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// gunzipOne decompresses one gzip member (checking its CRC-32 and size)
// and fails if anything follows it.
func gunzipOne(t *testing.T, b []byte) []byte {
	t.Helper()
	r := bytes.NewReader(b)
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes after the gzip member", r.Len())
	}
	return out
}

// TestGzippedListParts: a list gzipped in parts decompresses (one gzip
// member, valid CRC-32 and size) to prefix, items joined by commas,
// suffix, with the items' part compressed once and kept for later lists
// of the same objects whatever their prefix and suffix; lists of other
// objects (one replaced, reordered, fewer) do not find it.
func TestGzippedListParts(t *testing.T) {
	const kind = "test;TestGzippedListParts"
	t.Cleanup(func() {
		keptGzipItems.Lock()
		delete(keptGzipItems.m, kind)
		keptGzipItems.Unlock()
	})
	raws := make([][]byte, 3000)
	objs := make([]*cacheable.Object, len(raws))
	for i := range raws {
		raws[i] = fmt.Appendf(nil, `{"name":"item%05d","pad":%q}`, i, strings.Repeat(string(rune('a'+i%26)), i%90))
		objs[i] = cacheable.New(&unstructured.Unstructured{})
	}
	check := func(prefix, suffix string, raws [][]byte, gz *gzipItems) {
		t.Helper()
		var buf bytes.Buffer
		if err := writeGzippedList(&buf, []byte(prefix), []byte(suffix), gz); err != nil {
			t.Fatal(err)
		}
		got := gunzipOne(t, buf.Bytes())
		if want := prefix + string(bytes.Join(raws, []byte(","))) + suffix; string(got) != want {
			t.Fatalf("decompressed %d bytes, want %d (prefix %q)", len(got), len(want), prefix)
		}
	}

	if keptGzip(kind, objs) != nil {
		t.Fatal("kept items before any list")
	}
	gz := compressItems(kind, objs, raws)
	check(`{"kind":"List","metadata":{"resourceVersion":"1"},"items":[`, `]}`, raws, gz)
	kept := keptGzip(kind, objs)
	if kept != gz {
		t.Fatal("the compressed items were not kept")
	}
	check(`{"kind":"List","metadata":{"resourceVersion":"22","continue":"abc"},"items":[`, `],"x":1}`, raws, kept)

	other := append([]*cacheable.Object(nil), objs...)
	other[1500] = cacheable.New(&unstructured.Unstructured{})
	swapped := append([]*cacheable.Object(nil), objs...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	for name, o := range map[string][]*cacheable.Object{"one replaced": other, "reordered": swapped, "fewer": objs[:2999], "none": nil} {
		if keptGzip(kind, o) != nil {
			t.Fatalf("%s: found the kept items of other objects", name)
		}
	}
	if keptGzip("test;other kind", objs) != nil {
		t.Fatal("found the kept items of another kind of list")
	}

	// Replaced by the next list of the kind; empty items.
	changed := append([][]byte(nil), raws...)
	changed[1500] = []byte(`{"name":"changed"}`)
	gz2 := compressItems(kind, other, changed)
	check(`{"items":[`, `]}`, changed, gz2)
	if keptGzip(kind, objs) != nil || keptGzip(kind, other) != gz2 {
		t.Fatal("the next list's items did not replace the kept ones")
	}
	check(`{"items":[`, `]}`, nil, compressItems(kind, nil, nil))
}

// TestCRC32Combine: the combined CRC-32 of two parts is the CRC-32 of
// their concatenation, for empty, short and long parts.
func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, n := range []int{0, 1, 2, 3, 7, 8, 255, 4096, 65537, 1 << 20} {
		for _, cut := range []int{0, 1, n / 3, n / 2, n - 1, n} {
			if cut < 0 || cut > n {
				continue
			}
			a, b := data[:cut], data[cut:n]
			got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)))
			if want := crc32.ChecksumIEEE(data[:n]); got != want {
				t.Fatalf("n=%d cut=%d: combined %08x, want %08x", n, cut, got, want)
			}
		}
	}
}

// TestGzippedListPartsDoNotKeepObjects: kept compressed items do not keep
// their objects alive (a superseded object is collected; the entry then
// matches no list).
func TestGzippedListPartsDoNotKeepObjects(t *testing.T) {
	const kind = "test;TestGzippedListPartsDoNotKeepObjects"
	t.Cleanup(func() {
		keptGzipItems.Lock()
		delete(keptGzipItems.m, kind)
		keptGzipItems.Unlock()
	})
	func() {
		objs := []*cacheable.Object{cacheable.New(&unstructured.Unstructured{Object: map[string]any{"a": "b"}})}
		compressItems(kind, objs, [][]byte{[]byte(`{"a":"b"}`)})
		if keptGzip(kind, objs) == nil {
			t.Fatal("not kept")
		}
	}()
	keptGzipItems.Lock()
	kept := keptGzipItems.m[kind]
	keptGzipItems.Unlock()
	collected := false
	for range 10 {
		runtime.GC()
		if collected = kept.objs[0].Value() == nil; collected {
			break
		}
	}
	if !collected {
		t.Fatal("the kept compressed items keep their object alive")
	}
	// The next entry kept drops it.
	const other = kind + ";other"
	t.Cleanup(func() {
		keptGzipItems.Lock()
		delete(keptGzipItems.m, other)
		keptGzipItems.Unlock()
	})
	live := []*cacheable.Object{cacheable.New(&unstructured.Unstructured{})}
	compressItems(other, live, [][]byte{[]byte(`{}`)})
	keptGzipItems.Lock()
	_, stale := keptGzipItems.m[kind]
	keptGzipItems.Unlock()
	if stale {
		t.Fatal("an entry whose objects were collected was not dropped")
	}
	if keptGzip(other, live) == nil {
		t.Fatal("the new entry was not kept")
	}
}
