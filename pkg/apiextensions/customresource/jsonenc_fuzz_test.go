package customresource

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendJSON: for any JSON document a client could send (decoded as
// the unstructured decoder does, integers as int64 and other numbers as
// float64), the reflection-free writer produces exactly encoding/json's
// bytes, or the same failure.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"],"c":{"<":"&\u2028"}}`,
		`{"f":1.5e-7,"g":1e21,"h":-0.0,"i":123456789.125}`,
		`["\ud800","\xff",{"z":{},"y":[]}]`,
		`"é世界😀\u0000"`,
		`9223372036854775807`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return
		}
		v = unstructuredNumbers(v)
		want, wantErr := json.Marshal(v)
		got, gotErr := appendJSONValue(nil, v, 0)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("errors differ for %q: encoding/json %v, kapi %v", data, wantErr, gotErr)
		}
		if wantErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("bytes differ for %q:\nencoding/json %s\nkapi          %s", data, want, got)
		}
	})
}

// unstructuredNumbers turns json.Numbers into what apimachinery's
// unstructured decoding keeps: int64 when the number is an integer that
// fits, float64 otherwise.
func unstructuredNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	case map[string]any:
		for k, e := range t {
			t[k] = unstructuredNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = unstructuredNumbers(e)
		}
	}
	return v
}
