package impersonation

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// cacheTTL is how long a constrained mode remembers an impersonation it
// allowed (upstream's, the same as its token success cache).
const cacheTTL = 10 * time.Second

// modeIndexSize is how many requestors' last modes are remembered
// (upstream's).
const modeIndexSize = 10_000

// modeIndex maps a requestor's user name (hashed, so the memory is bounded
// whatever the names) to the mode that last allowed it, least recently
// used first out. A nil *modeIndex remembers nothing.
type modeIndex struct {
	mu      sync.Mutex
	size    int
	order   *list.List // of modeIndexEntry, most recent first
	entries map[[16]byte]*list.Element
}

type modeIndexEntry struct {
	key  [16]byte
	mode int
}

func newModeIndex(size int) *modeIndex {
	return &modeIndex{size: size, order: list.New(), entries: make(map[[16]byte]*list.Element)}
}

func modeIndexKey(name string) [16]byte {
	h := fnv.New128a()
	h.Write([]byte(name))
	var k [16]byte
	h.Sum(k[:0])
	return k
}

func (m *modeIndex) get(name string) (int, bool) {
	if m == nil {
		return 0, false
	}
	k := modeIndexKey(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok {
		return 0, false
	}
	m.order.MoveToFront(e)
	return e.Value.(modeIndexEntry).mode, true
}

func (m *modeIndex) set(name string, mode int) {
	if m == nil {
		return
	}
	k := modeIndexKey(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[k]; ok {
		e.Value = modeIndexEntry{key: k, mode: mode}
		m.order.MoveToFront(e)
		return
	}
	m.entries[k] = m.order.PushFront(modeIndexEntry{key: k, mode: mode})
	if m.order.Len() > m.size {
		oldest := m.order.Back()
		m.order.Remove(oldest)
		delete(m.entries, oldest.Value.(modeIndexEntry).key)
	}
}

// expiring remembers allowed impersonations for cacheTTL. Expired entries
// are dropped by a sweep at most once per cacheTTL, on a set.
type expiring struct {
	mu        sync.Mutex
	entries   map[string]expiringEntry
	lastSweep time.Time
}

type expiringEntry struct {
	u       *user.Info
	expires time.Time
}

// get returns a copy of the user remembered under key, or nil.
func (c *expiring) get(key string, now time.Time) *user.Info {
	if key == "" { // not cacheable
		return nil
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !now.Before(e.expires) {
		return nil
	}
	return copyUser(e.u)
}

// copyUser is a copy of u whose groups a caller may append to without
// touching u's.
func copyUser(u *user.Info) *user.Info {
	cp := *u
	cp.Groups = slices.Clone(u.Groups)
	return &cp
}

func (c *expiring) set(key string, u *user.Info, now time.Time) {
	if key == "" { // not cacheable
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]expiringEntry)
	}
	if now.Sub(c.lastSweep) >= cacheTTL {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		c.lastSweep = now
	}
	c.entries[key] = expiringEntry{u: u, expires: now.Add(cacheTTL)}
}

// cacheKey names an impersonation in a constrained mode's cache: the
// wanted user, the requestor and, for the whole-request cache, the
// request's attributes (nil for the user-only cache), length-prefixed and
// hashed with SHA-256, followed by the requestor's name (so that a
// collision could only ever be with the requestor's own entries, as
// upstream's key). A request whose selectors did not fully parse is not
// cached at all (""), as upstream.
func cacheKey(wanted Wanted, requestor *user.Info, request *authorizer.Attributes) string {
	if request != nil && (request.FieldSelectorErr != nil || request.LabelSelectorErr != nil) {
		return ""
	}
	var b keyBuilder
	b.user(wanted.Name, wanted.UID, wanted.Groups, wanted.Extra)
	b.user(requestor.Name, requestor.UID, requestor.Groups, requestor.Extra)
	if request != nil {
		b.str(request.Verb)
		b.flag(request.ResourceRequest)
		b.str(request.Namespace)
		b.str(request.APIGroup)
		b.str(request.APIVersion)
		b.str(request.Resource)
		b.str(request.Subresource)
		b.str(request.Name)
		b.str(request.Path)
		b.num(len(request.FieldSelector))
		for _, r := range request.FieldSelector {
			b.str(r.Field)
			b.str(string(r.Operator))
			b.str(r.Value)
		}
		b.num(len(request.LabelSelector))
		for _, r := range request.LabelSelector {
			b.str(r.String())
		}
	}
	sum := sha256.Sum256(b.buf)
	return hex.EncodeToString(sum[:]) + "/" + requestor.Name
}

// keyBuilder encodes a cache key's parts unambiguously.
type keyBuilder struct{ buf []byte }

func (b *keyBuilder) num(n int) { b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(n)) }

func (b *keyBuilder) str(s string) {
	b.num(len(s))
	b.buf = append(b.buf, s...)
}

func (b *keyBuilder) flag(v bool) {
	if v {
		b.buf = append(b.buf, 1)
	} else {
		b.buf = append(b.buf, 0)
	}
}

func (b *keyBuilder) strs(ss []string) {
	b.num(len(ss))
	for _, s := range ss {
		b.str(s)
	}
}

func (b *keyBuilder) user(name, uid string, groups []string, extra map[string][]string) {
	b.str(name)
	b.str(uid)
	b.strs(groups)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.num(len(keys))
	for _, k := range keys {
		b.str(k)
		b.strs(extra[k])
	}
}
