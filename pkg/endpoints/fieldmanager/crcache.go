package fieldmanager

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// sets holds the field sets crUpdater decoded, by their fieldsV1: the
// objects of a kind written by the same clients mostly carry the same
// few fieldsV1 (kapi-bench's 2,000 objects: one), so a set is decoded
// once, not once per entry per update.
var sets = &setCache{byHash: map[uint64][]*cachedSet{}}

// ids holds managers' identifiers (BuildManagerIdentifier) and their
// decodings.
var ids = &idCache{keys: map[idKey]string{}, entries: map[string]metav1.ManagedFieldsEntry{}}

// cachedSet is the field set of a fieldsV1 value. Neither fields nor set
// is changed once built (structured-merge-diff's set operations return
// new sets), so both are shared by every update that decodes the same
// fieldsV1, concurrently.
type cachedSet struct {
	fields map[string]any // a copy of the fieldsV1 the set was decoded from
	set    *fieldpath.Set
	nodes  int

	once sync.Once
	raw  []byte // set.ToJSON(), built on first use; nil if that failed
}

// json is the set's fieldsV1 as upstream's encoding writes it.
func (s *cachedSet) json() []byte {
	s.once.Do(func() {
		if b, err := s.set.ToJSON(); err == nil {
			s.raw = b
		}
	})
	return s.raw
}

// Bounds of setCache: together at most this many fieldsV1 nodes (map
// entries: ~280 bytes each with the set's, ~4.5 MiB in all)
// and sets; past either the cache starts again empty. A fieldsV1 of more
// than a quarter of the nodes is decoded without being kept.
const (
	maxCachedNodes = 1 << 14
	maxCachedSets  = 1024
)

// setCache is a bounded cache of cachedSets keyed by the content of
// their fieldsV1. It is safe for concurrent use.
type setCache struct {
	mu     sync.RWMutex
	byHash map[uint64][]*cachedSet
	nodes  int
	n      int
}

var fieldsSeed = maphash.MakeSeed()

// get returns the set of fieldsV1 value fields, decoded as upstream's
// FieldsToSet decodes its JSON encoding; ok is false when fields is not
// an object of objects or does not decode.
func (c *setCache) get(fields map[string]any) (*cachedSet, bool) {
	h, nodes, ok := hashFields(fields, 0)
	if !ok {
		return nil, false
	}
	c.mu.RLock()
	for _, s := range c.byHash[h] {
		if fieldsEqual(s.fields, fields) {
			c.mu.RUnlock()
			return s, true
		}
	}
	c.mu.RUnlock()

	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, false
	}
	var set fieldpath.Set
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, false
	}
	s := &cachedSet{fields: copyFields(fields), set: &set, nodes: nodes}
	if nodes > maxCachedNodes/4 {
		return s, true // too large to keep
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes+nodes > maxCachedNodes || c.n >= maxCachedSets {
		c.byHash, c.nodes, c.n = map[uint64][]*cachedSet{}, 0, 0
	}
	c.byHash[h] = append(c.byHash[h], s)
	c.nodes += nodes
	c.n++
	return s, true
}

// hashFields hashes an object of objects independently of its keys'
// order and counts its entries; ok is false for any other value or one
// nested deeper than any real fieldsV1.
func hashFields(fields map[string]any, depth int) (h uint64, nodes int, ok bool) {
	if depth > 100 {
		return 0, 0, false
	}
	h = uint64(len(fields)) * 0x9e3779b97f4a7c15
	for k, v := range fields {
		child, isMap := v.(map[string]any)
		if !isMap {
			return 0, 0, false
		}
		ch, n, ok := hashFields(child, depth+1)
		if !ok {
			return 0, 0, false
		}
		x := maphash.String(fieldsSeed, k) ^ (ch * 0xbf58476d1ce4e5b9)
		x ^= x >> 31
		x *= 0x94d049bb133111eb
		x ^= x >> 29
		h += x
		nodes += n + 1
	}
	return h, nodes, true
}

// fieldsEqual tells whether two objects of objects are equal.
func fieldsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, found := b[k]
		if !found {
			return false
		}
		am, _ := av.(map[string]any)
		bm, isMap := bv.(map[string]any)
		if !isMap || !fieldsEqual(am, bm) {
			return false
		}
	}
	return true
}

// copyFields deep-copies an object of objects.
func copyFields(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		out[k] = copyFields(v.(map[string]any))
	}
	return out
}

// Bound of idCache: past it, identifiers are built without being kept.
const maxCachedIDs = 4096

// idKey is what a manager's identifier encodes.
type idKey struct {
	manager    string
	op         metav1.ManagedFieldsOperationType
	apiVersion string
	sub        string
}

// idCache keeps managers' identifiers by their fields and the decodings
// of identifiers. It is safe for concurrent use.
type idCache struct {
	mu      sync.RWMutex
	keys    map[idKey]string
	entries map[string]metav1.ManagedFieldsEntry
}

func (c *idCache) byKey(k idKey) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	id, found := c.keys[k]
	return id, found
}

func (c *idCache) add(k idKey, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) < maxCachedIDs {
		c.keys[k] = id
	}
}

func (c *idCache) byID(id string) (metav1.ManagedFieldsEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, found := c.entries[id]
	return e, found
}

func (c *idCache) addEntry(id string, e metav1.ManagedFieldsEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) < maxCachedIDs {
		c.entries[id] = e
	}
}
