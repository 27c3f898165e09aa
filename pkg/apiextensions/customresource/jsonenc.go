package customresource

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The JSON of an unstructured object, written without reflection.
//
// appendJSONValue writes exactly what encoding/json writes for the same
// value (json.Marshal, or json.NewEncoder(w).Encode without its trailing
// newline), with HTML escaping on as encoding/json has it by default: map
// keys sorted, strings escaped as encoding/json's appendString does
// (\b \f \n \r \t \" \\ short forms, other control characters and < > &
// as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped), floats
// formatted as its floatEncoder does (ES6 style). That is the encoding of
// every custom resource kapi writes (responses and storage), which upstream
// makes with encoding/json (unstructured.UnstructuredJSONScheme): only the
// types JSON decoding produces are written here (map[string]any, []any,
// string, bool, int64, float64, nil, and the other integer types);
// anything else is handed to encoding/json, so the output and the errors
// (NaN, infinities, unsupported types) are encoding/json's.
// TestAppendJSONMatchesEncodingJSON compares the two on random objects.
// Source of the rules: Go 1.26 src/encoding/json/encode.go (appendString,
// floatEncoder.encode, mapEncoder.encode).

// maxJSONDepth hands deeper values to encoding/json, which detects cycles.
const maxJSONDepth = 500

const hexDigits = "0123456789abcdef"

func appendJSONValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return appendMarshaled(dst, v)
	}
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendJSONString(dst, t), nil
	case bool:
		return strconv.AppendBool(dst, t), nil
	case int64:
		return strconv.AppendInt(dst, t, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return appendMarshaled(dst, v) // encoding/json's error
		}
		return appendJSONFloat(dst, t), nil
	case map[string]any:
		return appendJSONObject(dst, t, depth)
	case []any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSONValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	return appendMarshaled(dst, v)
}

func appendJSONObject(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendJSONValue(dst, m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendMarshaled writes what encoding/json writes for v.
func appendMarshaled(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

func appendJSONFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// jsonSafe[b]: an ASCII byte written as it is in a JSON string with HTML
// escaping on (encoding/json's htmlSafeSet: printable, not " \ < > &).
var jsonSafe = func() (s [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		s[b] = true
	}
	for _, b := range `"\<>&` {
		s[b] = false
	}
	return s
}()

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

var jsonBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeUnstructuredJSON writes what unstructured.UnstructuredJSONScheme
// writes for an Unstructured object with this content
// (json.NewEncoder(w).Encode(obj): the JSON and a newline), newline
// included or not.
func writeUnstructuredJSON(w io.Writer, obj map[string]any, newline bool) error {
	bp := jsonBufPool.Get().(*[]byte)
	b, err := appendJSONValue((*bp)[:0], obj, 0)
	if err == nil {
		if newline {
			b = append(b, '\n')
		}
		_, err = w.Write(b)
	}
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		jsonBufPool.Put(bp)
	}
	return err
}
