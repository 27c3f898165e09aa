package handlers

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"
)

// A large list written from kept item encodings is gzipped in three
// parts, each compressed by a fresh DEFLATE compressor and ended with a
// sync flush (which byte-aligns the output, so the parts' blocks follow
// one another as one DEFLATE stream; the final block is the suffix's):
// the list's prefix, its items (joined by commas) and its suffix. The
// items part is what costs (a 2,000-item list is ~770 kB of JSON; the
// prefix and suffix, which hold the list's resourceVersion and continue
// token, are a few hundred bytes), and it depends only on the items'
// bytes: the compressed items of the last large list of each kind of
// list are kept and written again while the same bytes are listed, which
// is the case between writes of the resource whatever the list's
// resourceVersion (a consistent list's is etcd's current revision, which
// moves with writes of any resource). The client gets one gzip member
// (RFC 1952) with one DEFLATE stream (RFC 1951) of the whole body; its
// compressed size differs from a one-piece compression by a few bytes
// (each part starts without the earlier parts' history).
//
// Sound: the items' bytes are the ones the shared objects keep, never
// changed once computed; an entry records the address and length of each
// item's bytes (and so keeps them alive) and is used only when the list's
// items are those very bytes, in the same order.
//
// Bounded: one entry per kind of list (encoder, version and list kind),
// replaced by the next large gzipped list of that kind that differs;
// entries with more than maxKeptGzipItems compressed bytes are not kept.
// An entry holds its compressed bytes, 16 bytes per item and the items'
// bytes, which the shared objects hold anyway until their entries are
// written again (then the entry keeps one list's worth alive until the
// next list of that kind replaces it).

// maxKeptGzipItems bounds one kept compressed items part.
const maxKeptGzipItems = 8 << 20

// gzipItems is the compressed items part of one list.
type gzipItems struct {
	items    []itemRef // the items' bytes, in order
	deflated []byte    // their DEFLATE blocks, sync-flushed, not final
}

// itemRef identifies one item's kept bytes.
type itemRef struct {
	p *byte
	n int
}

var keptGzipItems = struct {
	sync.Mutex
	m map[string]*gzipItems
}{m: make(map[string]*gzipItems)}

var flatePool = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(nil, gzipLevel) // a valid level: no error
	return fw
}}

// gzipHeader is the header gzip.Writer writes at level 1 with no name,
// comment or modification time: XFL 4 (fastest), OS 255 (unknown).
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}

// writeGzippedList writes prefix, raws joined by commas, and suffix,
// gzipped, to w; kind names the kind of list (see above).
func writeGzippedList(w io.Writer, kind string, prefix, suffix []byte, raws [][]byte) error {
	refs := make([]itemRef, len(raws))
	for i, raw := range raws {
		if len(raw) > 0 {
			refs[i] = itemRef{p: &raw[0], n: len(raw)}
		}
	}
	keptGzipItems.Lock()
	kept := keptGzipItems.m[kind]
	keptGzipItems.Unlock()
	if kept != nil && !sameItems(kept.items, refs) {
		kept = nil
	}

	fw := flatePool.Get().(*flate.Writer)
	defer func() {
		fw.Reset(io.Discard)
		flatePool.Put(fw)
	}()
	if _, err := w.Write(gzipHeader); err != nil {
		return err
	}
	fw.Reset(w)
	if _, err := fw.Write(prefix); err != nil {
		return err
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	if kept == nil {
		var buf bytes.Buffer
		fw.Reset(&buf)
		for i, raw := range raws {
			if i > 0 {
				_, _ = fw.Write(comma)
			}
			_, _ = fw.Write(raw)
		}
		_ = fw.Flush() // a bytes.Buffer does not fail
		kept = &gzipItems{items: refs, deflated: buf.Bytes()}
		if len(kept.deflated) <= maxKeptGzipItems {
			keptGzipItems.Lock()
			keptGzipItems.m[kind] = kept
			keptGzipItems.Unlock()
		}
	}
	if _, err := w.Write(kept.deflated); err != nil {
		return err
	}
	fw.Reset(w)
	if _, err := fw.Write(suffix); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}

	crc := crc32.Update(0, crc32.IEEETable, prefix)
	size := len(prefix) + len(suffix)
	for i, raw := range raws {
		if i > 0 {
			crc = crc32.Update(crc, crc32.IEEETable, comma)
			size++
		}
		crc = crc32.Update(crc, crc32.IEEETable, raw)
		size += len(raw)
	}
	crc = crc32.Update(crc, crc32.IEEETable, suffix)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc)
	binary.LittleEndian.PutUint32(trailer[4:], uint32(size)) // ISIZE: the size modulo 2^32
	_, err := w.Write(trailer[:])
	return err
}

var comma = []byte{','}

func sameItems(a, b []itemRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
