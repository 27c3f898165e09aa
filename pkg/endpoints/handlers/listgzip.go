package handlers

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"
	"weak"

	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// A large list written from kept item encodings is gzipped in three
// parts, each compressed by a fresh DEFLATE compressor and ended with a
// sync flush (which byte-aligns the output, so the parts' blocks follow
// one another as one DEFLATE stream; the final block is the suffix's):
// the list's prefix, its items (joined by commas) and its suffix. The
// items part is what costs (a 2,000-item list is ~770 kB of JSON; the
// prefix and suffix, which hold the list's resourceVersion and continue
// token, are a few hundred bytes), and it depends only on the items:
// the compressed items of the last large list of each kind of list are
// kept and written again while the same items are listed, which
// is the case between writes of the resource whatever the list's
// resourceVersion (a consistent list's is etcd's current revision, which
// moves with writes of any resource). The client gets one gzip member
// (RFC 1952) with one DEFLATE stream (RFC 1951) of the whole body; its
// compressed size differs from a one-piece compression by a few bytes
// (each part starts without the earlier parts' history).
//
// Sound: an item's bytes are a function of its shared object (immutable)
// and the item encoder (which the kind of list names): the objects keep
// each encoding once computed. An entry records the items' objects (weak
// pointers) and is used only for a list of those very objects, in the
// same order, of the same kind: then neither the items' bytes nor their
// CRC-32 are looked at again (the trailer's CRC-32 is combined from the
// parts').
//
// Bounded: one entry per kind of list (encoder, version and list kind),
// replaced by the next large gzipped list of that kind that differs, and
// dropped (when another is kept) once its first object was collected;
// entries with more than maxKeptGzipItems compressed bytes are not kept.
// An entry holds its compressed bytes and 8 bytes per item; it does not
// keep the items' objects alive (once the watch cache or memory store
// drops an object, a list cannot hold it again, and the entry no longer
// matches).

// maxKeptGzipItems bounds one kept compressed items part.
const maxKeptGzipItems = 8 << 20

// gzipItems is the compressed items part of one list.
type gzipItems struct {
	objs     []weak.Pointer[cacheable.Object] // the items, in order
	deflated []byte                           // their bytes joined by commas, as DEFLATE blocks, sync-flushed, not final
	size     int64                            // the uncompressed length of the items part
	crc      uint32                           // its CRC-32 (IEEE)
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

// keptGzip returns the kept compressed items of kind if they are objs.
func keptGzip(kind string, objs []*cacheable.Object) *gzipItems {
	keptGzipItems.Lock()
	kept := keptGzipItems.m[kind]
	keptGzipItems.Unlock()
	if kept == nil || len(kept.objs) != len(objs) {
		return nil
	}
	for i, o := range objs {
		if kept.objs[i].Value() != o {
			return nil
		}
	}
	return kept
}

// compressItems compresses raws (the items objs encoded) joined by commas
// and keeps the result for kind.
func compressItems(kind string, objs []*cacheable.Object, raws [][]byte) *gzipItems {
	fw := flatePool.Get().(*flate.Writer)
	defer func() {
		fw.Reset(io.Discard)
		flatePool.Put(fw)
	}()
	var buf bytes.Buffer
	fw.Reset(&buf)
	// Pointers of their own: the caller's slice is not known to stay as
	// it is.
	g := &gzipItems{objs: make([]weak.Pointer[cacheable.Object], len(objs))}
	for i, o := range objs {
		g.objs[i] = weak.Make(o)
	}
	for i, raw := range raws {
		if i > 0 {
			_, _ = fw.Write(comma)
			g.crc = crc32.Update(g.crc, crc32.IEEETable, comma)
			g.size++
		}
		_, _ = fw.Write(raw) // a bytes.Buffer does not fail
		g.crc = crc32.Update(g.crc, crc32.IEEETable, raw)
		g.size += int64(len(raw))
	}
	_ = fw.Flush()
	g.deflated = buf.Bytes()
	if len(g.deflated) <= maxKeptGzipItems {
		keptGzipItems.Lock()
		// Entries of which an object was collected match no list again
		// (a deleted custom resource definition's, say): drop them.
		for k, e := range keptGzipItems.m {
			if len(e.objs) == 0 || e.objs[0].Value() == nil {
				delete(keptGzipItems.m, k)
			}
		}
		keptGzipItems.m[kind] = g
		keptGzipItems.Unlock()
	}
	return g
}

// writeGzippedList writes prefix, the items and suffix, gzipped, to w.
func writeGzippedList(w io.Writer, prefix, suffix []byte, items *gzipItems) error {
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
	if _, err := w.Write(items.deflated); err != nil {
		return err
	}
	fw.Reset(w)
	if _, err := fw.Write(suffix); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	crc := crc32.ChecksumIEEE(prefix)
	crc = crc32Combine(crc, items.crc, items.size)
	crc = crc32Combine(crc, crc32.ChecksumIEEE(suffix), int64(len(suffix)))
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc)
	// ISIZE: the uncompressed size modulo 2^32.
	binary.LittleEndian.PutUint32(trailer[4:], uint32(int64(len(prefix))+items.size+int64(len(suffix))))
	_, err := w.Write(trailer[:])
	return err
}

var comma = []byte{','}

// crc32Combine returns the CRC-32 (IEEE) of A followed by B from crcA,
// crcB = CRC-32 of B and lenB = len(B): crcA is advanced over lenB zero
// bytes by repeated squaring of the operator that appends one zero bit
// (a 32x32 matrix over GF(2)), then xored with crcB (the CRC is linear).
// This is the method of zlib's crc32_combine.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA ^ crcB
	}
	// odd: the operator for one zero bit (reflected polynomial).
	var odd, even [32]uint32
	odd[0] = crc32.IEEE
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four zero bits
	// Each step squares the operator (one zero byte, then two, four, ...)
	// and applies it where lenB has a one bit.
	for {
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

// gf2Times multiplies the GF(2) matrix mat by the vector vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat times mat.
func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}
