// Package delta encodes a byte string as its differences from another
// (a base): the stores keep superseded states of an object this way, as
// differences from an older state of the same object, kept whole (the
// memory backend's history, the watch cache's event window). Successive
// states of an object differ in a few places, so a delta is a small part
// of the value; rebuilding one reads its base once.
package delta

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Delta encoding: uvarint(len(target)), then ops until the end, each
// uvarint(baseOffset) uvarint(copyLength) uvarint(literalLength) and the
// literal's bytes: the target is every op's base[baseOffset:][:copyLength]
// followed by its literal, in order.
const (
	// deltaWindow is how far (bytes) a resynchronisation after a
	// difference looks, in the target and around the base's position.
	deltaWindow = 64
	// deltaMatch is the length of the run that resynchronises.
	deltaMatch = 8
)

// Append appends to dst the delta that rebuilds target from base, or
// returns nil if it would be longer than limit bytes (or the two do not
// line up within deltaWindow after a difference). It costs about one pass
// over target plus a bounded search per difference.
func Append(dst, target, base []byte, limit int) []byte {
	if limit <= 0 {
		return nil
	}
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(target)))
	i, j := 0, 0 // positions in target and base
	for i < len(target) {
		m := commonPrefix(target[i:], base[j:])
		ci, cj := i+m, j+m
		ni, nj := len(target), cj // no resynchronisation: the rest is literal
		if ci < len(target) {
			var ok bool
			if ni, nj, ok = resync(target, base, ci, cj); !ok {
				return nil
			}
		}
		dst = binary.AppendUvarint(dst, uint64(j))
		dst = binary.AppendUvarint(dst, uint64(m))
		dst = binary.AppendUvarint(dst, uint64(ni-ci))
		dst = append(dst, target[ci:ni]...)
		if len(dst)-start > limit {
			return nil
		}
		i, j = ni, nj
	}
	return dst
}

// resync finds where target, differing from base at target[i] / base[j],
// runs along base again: the first position i+a (a <= deltaWindow) whose
// deltaMatch bytes occur in base near j. A tail shorter than deltaMatch is
// literal (ni = len(target)).
func resync(target, base []byte, i, j int) (ni, nj int, ok bool) {
	for a := 0; a <= deltaWindow; a++ {
		if i+a+deltaMatch > len(target) {
			return len(target), j, true
		}
		w := target[i+a : i+a+deltaMatch]
		lo := max(0, j-deltaWindow)
		hi := min(len(base), j+a+deltaWindow+deltaMatch)
		if lo >= hi {
			continue
		}
		if p := bytes.Index(base[lo:hi], w); p >= 0 {
			return i + a, lo + p, true
		}
	}
	return 0, 0, false
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Apply rebuilds the value d (made by Append against base).
func Apply(base, d []byte) []byte {
	n, k := binary.Uvarint(d)
	d = d[k:]
	out := make([]byte, 0, n)
	for len(d) > 0 {
		off, k1 := binary.Uvarint(d)
		d = d[k1:]
		cl, k2 := binary.Uvarint(d)
		d = d[k2:]
		ll, k3 := binary.Uvarint(d)
		d = d[k3:]
		out = append(out, base[off:off+cl]...)
		out = append(out, d[:ll]...)
		d = d[ll:]
	}
	return out
}
