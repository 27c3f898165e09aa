package memory

import (
	"slices"
	"sort"
)

// chunkSize is the target length of a keyIndex chunk; chunks split at twice
// that, so inserts move at most 2*chunkSize keys.
const chunkSize = 256

// keyIndex is a sorted set of keys kept as a list of sorted chunks, so that
// inserting a key costs O(log n + chunkSize) instead of moving every key.
type keyIndex struct {
	chunks [][]string // each non-empty and sorted; chunk i < chunk i+1
	n      int
}

// chunkFor returns the index of the chunk that holds or would hold k.
func (x *keyIndex) chunkFor(k string) int {
	i := sort.Search(len(x.chunks), func(i int) bool { return x.chunks[i][0] > k }) - 1
	return max(i, 0)
}

// insert adds k (no-op if present).
func (x *keyIndex) insert(k string) {
	if len(x.chunks) == 0 {
		x.chunks = [][]string{{k}}
		x.n = 1
		return
	}
	i := x.chunkFor(k)
	c := x.chunks[i]
	j, found := slices.BinarySearch(c, k)
	if found {
		return
	}
	c = slices.Insert(c, j, k)
	x.n++
	if len(c) < 2*chunkSize {
		x.chunks[i] = c
		return
	}
	upper := slices.Clone(c[chunkSize:])
	x.chunks[i] = c[:chunkSize]
	x.chunks = slices.Insert(x.chunks, i+1, upper)
}

// ascend calls fn for each key >= from in order until fn returns false.
func (x *keyIndex) ascend(from string, fn func(k string) bool) {
	if len(x.chunks) == 0 {
		return
	}
	i := x.chunkFor(from)
	j, _ := slices.BinarySearch(x.chunks[i], from)
	for ; i < len(x.chunks); i, j = i+1, 0 {
		for _, k := range x.chunks[i][j:] {
			if !fn(k) {
				return
			}
		}
	}
}

// len returns the number of keys.
func (x *keyIndex) len() int { return x.n }

// retain keeps only the keys for which keep returns true.
func (x *keyIndex) retain(keep func(k string) bool) {
	var all []string
	for _, c := range x.chunks {
		for _, k := range c {
			if keep(k) {
				all = append(all, k)
			}
		}
	}
	x.chunks = x.chunks[:0:0]
	for len(all) > 0 {
		n := min(chunkSize, len(all))
		x.chunks = append(x.chunks, all[:n:n])
		all = all[n:]
	}
	x.n = 0
	for _, c := range x.chunks {
		x.n += len(c)
	}
}
