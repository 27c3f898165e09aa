package customresource

import (
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON of an unstructured object, read without reflection.
//
// decodeJSONObject returns what k8s.io/apimachinery/pkg/util/json.Unmarshal
// (sigs.k8s.io/json, case-sensitive, integers preserved) decodes a JSON
// object into: map[string]any, []any (empty arrays non-nil), string, bool,
// nil, int64 for a number without '.' that fits, float64 otherwise;
// invalid UTF-8 in strings replaced by U+FFFD and a lone or invalid
// surrogate escape by U+FFFD, as its unquote; the last of duplicate keys
// wins. It answers ok=false, and the caller decodes with the standard
// decoder, for whatever it does not read itself: a document that is not
// one object, invalid JSON, a number float64 cannot hold, nesting deeper
// than maxDecodeDepth. So the objects are the standard decoder's, and the
// errors are its own. The standard decoder scans the document twice (a
// validity pass, then the decoding one) and builds the top-level map by
// reflection; this reads it once. TestDecodeJSONObjectMatchesStandard
// compares the two on random documents and random corruptions of them.
// Source of the rules: sigs.k8s.io/json internal/golang/encoding/json
// (decode.go: objectInterface, arrayInterface, literalInterface,
// convertNumber, unquoteBytes; scanner.go for the grammar).

// maxDecodeDepth hands deeper documents to the standard decoder (whose
// limit is 10000).
const maxDecodeDepth = 1000

// jsonReader reads one document; i is the next byte to read.
type jsonReader struct {
	data  []byte
	i     int
	depth int
	// strict: an object with a key twice is handed over (the strict
	// decoder reports it).
	strict bool
	// topDup: the top-level object holds a key twice.
	topDup bool
	// items holds the items of the arrays being read (see array), in
	// the slice pooled came from itemsPool with.
	items  []any
	pooled *[]any
}

// decodeJSONObject decodes the object data holds, as described above
// (ok=false: use the standard decoder).
func decodeJSONObject(data []byte) (map[string]any, bool) {
	r := jsonReader{data: data}
	defer r.release()
	return r.document()
}

// decodeJSONBody is decodeJSONObject for a request body; strict is for
// sigs.k8s.io/json's UnmarshalStrict into a map: the same map, and
// ok=false also when an object holds a key twice (which it reports as a
// strict error; it has no other strict error for a map). topDup tells
// whether the top-level object holds a key twice (the map has the last).
func decodeJSONBody(data []byte, strict bool) (m map[string]any, topDup, ok bool) {
	r := jsonReader{data: data, strict: strict}
	defer r.release()
	m, ok = r.document()
	return m, r.topDup, ok
}

// document reads the whole document: one object.
func (r *jsonReader) document() (map[string]any, bool) {
	data := r.data
	r.skipSpace()
	if r.i >= len(data) || data[r.i] != '{' {
		return nil, false
	}
	m, ok := r.object()
	if !ok {
		return nil, false
	}
	r.skipSpace()
	if r.i != len(data) {
		return nil, false
	}
	return m, true
}

func (r *jsonReader) skipSpace() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) value() (any, bool) {
	if r.i >= len(r.data) {
		return nil, false
	}
	switch c := r.data[r.i]; {
	case c == '{':
		m, ok := r.object()
		return m, ok
	case c == '[':
		return r.array()
	case c == '"':
		return r.stringValue()
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return r.number()
	}
	return nil, false
}

func (r *jsonReader) literal(lit string) bool {
	if len(r.data)-r.i < len(lit) || string(r.data[r.i:r.i+len(lit)]) != lit {
		return false
	}
	r.i += len(lit)
	return true
}

// object reads an object starting at its '{'.
func (r *jsonReader) object() (map[string]any, bool) {
	if r.depth++; r.depth > maxDecodeDepth {
		return nil, false
	}
	r.i++
	m := make(map[string]any)
	r.skipSpace()
	if r.i < len(r.data) && r.data[r.i] == '}' {
		r.i++
		r.depth--
		return m, true
	}
	for {
		if r.i >= len(r.data) || r.data[r.i] != '"' {
			return nil, false
		}
		k, ok := r.string()
		if !ok {
			return nil, false
		}
		r.skipSpace()
		if r.i >= len(r.data) || r.data[r.i] != ':' {
			return nil, false
		}
		r.i++
		r.skipSpace()
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		if r.strict || r.depth == 1 {
			if _, dup := m[k]; dup {
				if r.strict {
					return nil, false
				}
				r.topDup = true
			}
		}
		m[k] = v
		r.skipSpace()
		if r.i >= len(r.data) {
			return nil, false
		}
		switch r.data[r.i] {
		case ',':
			r.i++
			r.skipSpace()
		case '}':
			r.i++
			r.depth--
			return m, true
		default:
			return nil, false
		}
	}
}

// array reads an array starting at its '['.
func (r *jsonReader) array() (any, bool) {
	if r.depth++; r.depth > maxDecodeDepth {
		return nil, false
	}
	r.i++
	r.skipSpace()
	if r.i < len(r.data) && r.data[r.i] == ']' {
		r.i++
		r.depth--
		return make([]any, 0), true
	}
	// The items go on r.items (nested arrays' above them) and are copied
	// to a slice of their number at the end: one allocation per array
	// instead of append's growth.
	if r.pooled == nil {
		r.pooled = itemsPool.Get().(*[]any)
		r.items = *r.pooled
	}
	base := len(r.items)
	defer func() { clear(r.items[base:]); r.items = r.items[:base] }()
	for {
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		r.items = append(r.items, v)
		r.skipSpace()
		if r.i >= len(r.data) {
			return nil, false
		}
		switch r.data[r.i] {
		case ',':
			r.i++
			r.skipSpace()
		case ']':
			r.i++
			r.depth--
			return append(make([]any, 0, len(r.items)-base), r.items[base:]...), true
		default:
			return nil, false
		}
	}
}

// itemsPool holds readers' scratch slices for array items (empty, and
// cleared: they keep nothing alive).
var itemsPool = sync.Pool{New: func() any { s := make([]any, 0, 32); return &s }}

// release returns r's scratch slice to itemsPool.
func (r *jsonReader) release() {
	if r.pooled != nil && cap(r.items) <= 1024 {
		*r.pooled = r.items[:0]
		itemsPool.Put(r.pooled)
	}
	r.pooled, r.items = nil, nil
}

// string reads a string starting at its '"' (an object's key).
func (r *jsonReader) string() (string, bool) {
	start, end, plain, ok := r.scanString()
	if !ok {
		return "", false
	}
	if plain {
		b := r.data[start:end]
		if s, found := internJSON(b); found {
			return s, true
		}
		if len(b) > maxInternedLen {
			return string(b), true
		}
		return interned(b).s, true
	}
	return unquoteJSON(r.data[start:end]), true
}

// stringValue is string for a value: the string boxed, shared with other
// decodes' when it is one they hold too (a box is an allocation of its
// own).
func (r *jsonReader) stringValue() (any, bool) {
	start, end, plain, ok := r.scanString()
	if !ok {
		return nil, false
	}
	if plain {
		b := r.data[start:end]
		if len(b) == 0 || len(b) > maxInternedLen {
			return string(b), true // "" is boxed without an allocation
		}
		return interned(b).v, true
	}
	return unquoteJSON(r.data[start:end]), true
}

// scanString reads a string starting at its '"': its content is
// r.data[start:end], plain when it holds no escape and ASCII only.
func (r *jsonReader) scanString() (start, end int, plain, ok bool) {
	start = r.i + 1
	plain = true // no escapes, ASCII only
	j := start
	for ; j < len(r.data); j++ {
		c := r.data[j]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return 0, 0, false, false
		}
		if c == '\\' {
			plain = false
			// The scanner's escapes: \" \\ \/ \b \f \n \r \t \uXXXX.
			if j+1 >= len(r.data) {
				return 0, 0, false, false
			}
			switch r.data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(r.data) {
					return 0, 0, false, false
				}
				for _, h := range r.data[j+2 : j+6] {
					if !isHex(h) {
						return 0, 0, false, false
					}
				}
				j += 5
			default:
				return 0, 0, false, false
			}
			continue
		}
		if c >= utf8.RuneSelf {
			plain = false
		}
	}
	if j >= len(r.data) {
		return 0, 0, false, false
	}
	r.i = j + 1
	return start, j, plain, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unquoteJSON decodes the content of a string the scanner accepts (escapes
// checked), as unquoteBytes: escapes, surrogate pairs, anything else
// invalid as U+FFFD.
func unquoteJSON(s []byte) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+2 : r+6])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); dec != unicode.ReplacementChar {
							r += 6
							b = utf8.AppendRune(b, dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // " \ /
				b = append(b, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b)
}

// hex4 is the value of four hexadecimal digits (checked by the reader).
func hex4(h []byte) rune {
	var v rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		v = v<<4 | rune(c)
	}
	return v
}

// number reads a number as the scanner's grammar has it, converted as
// convertNumber with PreserveInts.
func (r *jsonReader) number() (any, bool) {
	d, start := r.data, r.i
	j := start
	if d[j] == '-' {
		j++
	}
	switch {
	case j < len(d) && d[j] == '0':
		j++
	case j < len(d) && '1' <= d[j] && d[j] <= '9':
		for j++; j < len(d) && '0' <= d[j] && d[j] <= '9'; j++ {
		}
	default:
		return nil, false
	}
	if end := j; end-start <= 18 && (end >= len(d) || d[end] != '.' && d[end] != 'e' && d[end] != 'E') {
		// An integer of at most 18 characters fits an int64.
		r.i = end
		var n int64
		k := start
		if d[k] == '-' {
			k++
		}
		for ; k < end; k++ {
			n = n*10 + int64(d[k]-'0')
		}
		if d[start] == '-' {
			n = -n
		}
		return n, true
	}
	dot := false
	if j < len(d) && d[j] == '.' {
		dot = true
		j++
		if j >= len(d) || d[j] < '0' || d[j] > '9' {
			return nil, false
		}
		for ; j < len(d) && '0' <= d[j] && d[j] <= '9'; j++ {
		}
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if j >= len(d) || d[j] < '0' || d[j] > '9' {
			return nil, false
		}
		for ; j < len(d) && '0' <= d[j] && d[j] <= '9'; j++ {
		}
	}
	r.i = j
	s := string(d[start:j])
	if !dot {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of float64's range: the standard decoder's error.
		return nil, false
	}
	return f, true
}

// internJSON returns b as a string without allocating when it is one of
// the strings every custom resource holds (metadata's keys, its
// managedFields' keys and values); found is false for any other.
// Strings are immutable: sharing them is safe.
func internJSON(b []byte) (s string, found bool) {
	switch string(b) {
	case "apiVersion":
		return "apiVersion", true
	case "kind":
		return "kind", true
	case "metadata":
		return "metadata", true
	case "name":
		return "name", true
	case "namespace":
		return "namespace", true
	case "uid":
		return "uid", true
	case "resourceVersion":
		return "resourceVersion", true
	case "generation":
		return "generation", true
	case "creationTimestamp":
		return "creationTimestamp", true
	case "labels":
		return "labels", true
	case "annotations":
		return "annotations", true
	case "managedFields":
		return "managedFields", true
	case "manager":
		return "manager", true
	case "operation":
		return "operation", true
	case "Update":
		return "Update", true
	case "Apply":
		return "Apply", true
	case "time":
		return "time", true
	case "fieldsType":
		return "fieldsType", true
	case "FieldsV1":
		return "FieldsV1", true
	case "fieldsV1":
		return "fieldsV1", true
	case "subresource":
		return "subresource", true
	case "status":
		return "status", true
	case "spec":
		return "spec", true
	case ".":
		return ".", true
	case "f:metadata":
		return "f:metadata", true
	case "f:spec":
		return "f:spec", true
	case "f:status":
		return "f:status", true
	case "f:labels":
		return "f:labels", true
	case "f:annotations":
		return "f:annotations", true
	}
	return "", false
}

// maxInternedLen bounds the strings the decoder keeps in internedStrings.
const maxInternedLen = 64

// internedString is a string the decoder read, with its boxed form.
type internedString struct {
	s string
	v any // s boxed
}

// internedStrings holds strings decodes read, by a hash of their bytes,
// one per slot (a string read again takes the slot): the keys of a
// kind's objects, their apiVersion, kind and namespace, their managers'
// names, are the same in every object of the kind, and every decode
// allocated each of them again, and a box for each value. Strings and
// boxed strings are immutable: sharing them is safe. At most
// len(internedStrings) strings of up to maxInternedLen bytes are kept.
var (
	internedStrings [1024]atomic.Pointer[internedString]
	internSeed      = maphash.MakeSeed()
)

// interned returns b's string from internedStrings, adding it there when
// its slot holds another one; b is at most maxInternedLen bytes.
func interned(b []byte) *internedString {
	slot := &internedStrings[maphash.Bytes(internSeed, b)%uint64(len(internedStrings))]
	if e := slot.Load(); e != nil && e.s == string(b) {
		return e
	}
	s := string(b)
	e := &internedString{s: s, v: s}
	slot.Store(e)
	return e
}
