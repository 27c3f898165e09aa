package cacher

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage/internal/delta"
)

// Packed form of a custom resource (an unstructured object's tree), for the
// superseded states the event window keeps (see packedObj). It is a
// private, exact serialization, not JSON: a decoded custom resource holds
// only maps, lists, strings, int64, float64, bools and nils, and each of
// them is written with its type, so unpacking gives back a tree equal to
// the packed one, value for value and type for type (JSON would turn a
// float64 1.0 into int64 1, and costs a parse). Map keys are written
// sorted, so two states of an object pack alike except where they differ,
// and a delta between them is small.
//
//	value  = tag payload
//	nil    = 'z'
//	false  = 'f'       true = 't'
//	int64  = 'i' varint
//	float  = 'd' 8 bytes (IEEE 754, little endian)
//	string = 's' uvarint(len) bytes
//	list   = 'l' uvarint(n) value*n
//	map    = 'm' uvarint(n) (uvarint(len) key-bytes value)*n, keys sorted
const (
	tagNil    = 'z'
	tagFalse  = 'f'
	tagTrue   = 't'
	tagInt    = 'i'
	tagFloat  = 'd'
	tagString = 's'
	tagList   = 'l'
	tagMap    = 'm'
)

// errUnpackable is returned by appendPacked for a tree holding a value of
// another type (or a typed nil map or list), which the packed form could
// not give back exactly: such an object stays decoded.
var errUnpackable = errors.New("value cannot be packed exactly")

// maxPackDepth bounds the recursion of packing and unpacking (decoded
// JSON is far shallower; kube's decoder limits nesting too).
const maxPackDepth = 10000

// appendPacked appends the packed form of v to dst.
func appendPacked(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxPackDepth {
		return nil, errUnpackable
	}
	switch x := v.(type) {
	case nil:
		return append(dst, tagNil), nil
	case bool:
		if x {
			return append(dst, tagTrue), nil
		}
		return append(dst, tagFalse), nil
	case int64:
		dst = append(dst, tagInt)
		return binary.AppendVarint(dst, x), nil
	case float64:
		dst = append(dst, tagFloat)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x)), nil
	case string:
		dst = append(dst, tagString)
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...), nil
	case []any:
		if x == nil {
			return nil, errUnpackable
		}
		dst = append(dst, tagList)
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		for _, e := range x {
			var err error
			if dst, err = appendPacked(dst, e, depth+1); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case map[string]any:
		if x == nil {
			return nil, errUnpackable
		}
		return appendPackedMap(dst, x, depth)
	}
	return nil, errUnpackable
}

func appendPackedMap(dst []byte, m map[string]any, depth int) ([]byte, error) {
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, tagMap)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		dst = binary.AppendUvarint(dst, uint64(len(k)))
		dst = append(dst, k...)
		var err error
		if dst, err = appendPacked(dst, m[k], depth+1); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// packUnstructured returns the packed form of u's object.
func packUnstructured(u *unstructured.Unstructured) ([]byte, error) {
	if u.Object == nil {
		return nil, errUnpackable
	}
	return appendPackedMap(make([]byte, 0, 1024), u.Object, 0)
}

// unpackUnstructured rebuilds the object packUnstructured packed.
func unpackUnstructured(data []byte) (*unstructured.Unstructured, error) {
	r := unpacker{data: data}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if r.off != len(r.data) {
		return nil, fmt.Errorf("packed object: %d bytes after the value", len(r.data)-r.off)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("packed object: %T, not a map", v)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

type unpacker struct {
	data []byte
	off  int
}

var errPackedShort = errors.New("packed object: truncated")

func (r *unpacker) uvarint() (uint64, error) {
	n, k := binary.Uvarint(r.data[r.off:])
	if k <= 0 {
		return 0, errPackedShort
	}
	r.off += k
	return n, nil
}

// str reads a length-prefixed string (the length is checked against the
// bytes left, so a corrupt length cannot allocate).
func (r *unpacker) str() (string, error) {
	n, err := r.uvarint()
	if err != nil {
		return "", err
	}
	if n > uint64(len(r.data)-r.off) {
		return "", errPackedShort
	}
	s := string(r.data[r.off : r.off+int(n)])
	r.off += int(n)
	return s, nil
}

// count reads an element count, each element taking at least one byte.
func (r *unpacker) count() (int, error) {
	n, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.data)-r.off) {
		return 0, errPackedShort
	}
	return int(n), nil
}

func (r *unpacker) value(depth int) (any, error) {
	if depth > maxPackDepth {
		return nil, errors.New("packed object: too deep")
	}
	if r.off >= len(r.data) {
		return nil, errPackedShort
	}
	tag := r.data[r.off]
	r.off++
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagInt:
		n, k := binary.Varint(r.data[r.off:])
		if k <= 0 {
			return nil, errPackedShort
		}
		r.off += k
		return n, nil
	case tagFloat:
		if len(r.data)-r.off < 8 {
			return nil, errPackedShort
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(r.data[r.off:]))
		r.off += 8
		return f, nil
	case tagString:
		return r.str()
	case tagList:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		l := make([]any, n)
		for i := range l {
			if l[i], err = r.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return l, nil
	case tagMap:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, n)
		for range n {
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			if m[k], err = r.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("packed object: unknown tag %q", tag)
}

// packedObj is a superseded state of a custom resource as the event window
// keeps it: packed (see appendPacked), whole or as a delta against an older
// packed state of the same key (its base, an anchor: always whole, so
// rebuilding reads one base, never a chain).
//
// Why: the window keeps the states of its last 16,384 events (by default,
// while they are younger than EventFreshness). Decoded, a state of a small
// custom resource costs ~1.9 KB even sharing its unchanged parts with the
// state before (the maps on the paths to what changed); packed as a delta
// it costs ~200 bytes. Only watchers resuming from far back in the window
// (and lagging ones that far behind) read such states; they are unpacked
// for them, and the object unpacked is shared while anything holds it.
type packedObj struct {
	data []byte
	base *packedObj // nil: data is the whole packed object

	mu sync.Mutex
	// last is the object this state was last unpacked to (at first, the
	// decoded object it was packed from), while anything else holds it:
	// concurrent readers share one object, as they shared the decoded one.
	last weak.Pointer[unstructured.Unstructured]
}

// object returns the state, unpacked (shared: callers must not modify it).
// key is for the message of a state that cannot be unpacked, which would be
// a bug in packing: the state was packed from an object and is immutable.
func (p *packedObj) object(key string) runtime.Object {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.last.Value(); u != nil {
		return u
	}
	data := p.data
	if p.base != nil {
		data = delta.Apply(p.base.data, p.data)
	}
	u, err := unpackUnstructured(data)
	if err != nil {
		panic(fmt.Sprintf("watch cache: the packed state of %q cannot be unpacked: %v", key, err))
	}
	p.last = weak.Make(u)
	return u
}

// packLag is how many events behind the newest an event's superseded
// states are packed: watchers a little behind (lagging ones catching up,
// a watch resumed after a short break) read the states they need decoded.
const packLag = 1024

// packer packs the superseded states of the event window. It is used by the
// reflector goroutine only (apply and replace), without c.mu.
type packer struct {
	// anchors is the newest whole packed state (anchor) of each key, held
	// weakly: the deltas made against it keep it alive, and once they have
	// all left the window it goes and the key's next state is a new anchor.
	anchors map[string]weak.Pointer[packedObj]
	buf     []byte   // the packed form being made
	queue   []*entry // entries to pack after apply's dispatch
	deleted []bool   // queue[i] is the last state of a deleted key
}

// noteLocked queues, when ev is pushed to the window, the states that
// became packable: those of the event packLag events behind ev, which
// are superseded (its previous state; its own, for a deletion).
// Called with c.mu held, by apply only.
func (c *Cacher) noteLocked() {
	r := &c.events
	if r.n <= packLag {
		return
	}
	old := r.at(r.n - 1 - packLag)
	if old.prev != nil {
		c.packer.queue = append(c.packer.queue, old.prev)
		c.packer.deleted = append(c.packer.deleted, false)
	}
	if old.typ == watch.Deleted {
		c.packer.queue = append(c.packer.queue, old.cur)
		c.packer.deleted = append(c.packer.deleted, true)
	}
}

// packQueued packs the queued states (reflector goroutine, without c.mu:
// readers load an entry's body atomically and see it decoded or packed).
func (c *Cacher) packQueued() {
	p := &c.packer
	for i, e := range p.queue {
		c.pack(e)
		if p.deleted[i] {
			delete(p.anchors, e.key)
		}
		p.queue[i] = nil
	}
	p.queue, p.deleted = p.queue[:0], p.deleted[:0]
	if len(p.anchors) > 1024 && len(p.anchors) > 2*c.objectCount()+1024 {
		for k, a := range p.anchors {
			if a.Value() == nil {
				delete(p.anchors, k)
			}
		}
	}
}

// objectCount is the number of current objects.
func (c *Cacher) objectCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.objects.items)
}

// pack replaces e's decoded custom resource by its packed form: a delta
// against the key's anchor, or, the first time or when the delta would not
// save half of it, a new anchor kept whole. Objects of other types
// (built-in kinds, which have no packed form yet), and trees the packed
// form cannot give back exactly, stay decoded.
func (c *Cacher) pack(e *entry) {
	b := e.body.Load()
	u, ok := b.obj.(*unstructured.Unstructured)
	if b.packed != nil || !ok || u.Object == nil {
		return
	}
	p := &c.packer
	data, err := appendPackedMap(p.buf[:0], u.Object, 0)
	if err != nil {
		return
	}
	p.buf = data
	po := &packedObj{}
	if anchor := p.anchors[e.key].Value(); anchor != nil {
		var buf [256]byte // the delta is built here and kept at its exact size
		if d := delta.Append(buf[:0], data, anchor.data, len(data)/2); d != nil {
			po.data, po.base = bytes.Clone(d), anchor
		}
	}
	if po.base == nil {
		po.data = bytes.Clone(data)
		if p.anchors == nil {
			p.anchors = make(map[string]weak.Pointer[packedObj])
		}
		p.anchors[e.key] = weak.Make(po)
	}
	po.last = weak.Make(u)
	e.body.Store(&entryBody{packed: po})
	// The state's kept serializations (a list read it while it was
	// current) go with its decoded object; a rare read of it encodes
	// again.
	e.encodings.Store(nil)
}

// resetPacker forgets the anchors (a relist: the window is empty).
func (c *Cacher) resetPacker() {
	c.packer.anchors = nil
	clear(c.packer.queue)
	c.packer.queue, c.packer.deleted = c.packer.queue[:0], c.packer.deleted[:0]
}
