package handlers

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"
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

// TestWriteGzippedList: the list gzipped in parts decompresses (one gzip
// member, valid CRC and size) to prefix, items joined by commas, suffix;
// a list of the same item bytes reuses the kept compressed items whatever
// its prefix and suffix; a list whose items differ in one item's bytes
// (even with equal content) or in order compresses its own and replaces
// the kept part.
func TestWriteGzippedList(t *testing.T) {
	const kind = "test;TestWriteGzippedList"
	t.Cleanup(func() {
		keptGzipItems.Lock()
		delete(keptGzipItems.m, kind)
		keptGzipItems.Unlock()
	})
	raws := make([][]byte, 3000)
	for i := range raws {
		raws[i] = fmt.Appendf(nil, `{"name":"item%05d","pad":%q}`, i, strings.Repeat(string(rune('a'+i%26)), i%90))
	}
	want := func(prefix, suffix string, raws [][]byte) []byte {
		return []byte(prefix + string(bytes.Join(raws, []byte(","))) + suffix)
	}
	write := func(prefix, suffix string, raws [][]byte) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := writeGzippedList(&buf, kind, []byte(prefix), []byte(suffix), raws); err != nil {
			t.Fatal(err)
		}
		got := gunzipOne(t, buf.Bytes())
		if w := want(prefix, suffix, raws); !bytes.Equal(got, w) {
			t.Fatalf("decompressed %d bytes, want %d (prefix %q)", len(got), len(w), prefix)
		}
		return buf.Bytes()
	}
	kept := func() *gzipItems {
		keptGzipItems.Lock()
		defer keptGzipItems.Unlock()
		return keptGzipItems.m[kind]
	}

	write(`{"kind":"List","metadata":{"resourceVersion":"1"},"items":[`, `]}`, raws)
	first := kept()
	if first == nil || len(first.items) != len(raws) {
		t.Fatal("no compressed items kept")
	}
	write(`{"kind":"List","metadata":{"resourceVersion":"22","continue":"abc"},"items":[`, `],"x":1}`, raws)
	if kept() != first {
		t.Fatal("a list of the same item bytes compressed its items again")
	}

	// The same content in a new slice: not known to be the same bytes.
	changed := append([][]byte(nil), raws...)
	changed[1500] = append([]byte(nil), raws[1500]...)
	write(`{"items":[`, `]}`, changed)
	second := kept()
	if second == first {
		t.Fatal("items with new bytes reused the kept compressed items")
	}
	changed[1500] = []byte(`{"name":"changed"}`)
	write(`{"items":[`, `]}`, changed)
	if kept() == second {
		t.Fatal("changed items reused the kept compressed items")
	}
	swapped := append([][]byte(nil), raws...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	write(`{"items":[`, `]}`, swapped)
	write(`{"items":[`, `]}`, swapped[:10])
	write(`{"items":[`, `]}`, nil)
	if got := kept(); len(got.items) != 0 {
		t.Fatalf("kept %d items after an empty list", len(got.items))
	}
}
