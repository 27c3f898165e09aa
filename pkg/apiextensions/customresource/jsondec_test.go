package customresource

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// standardObject decodes data as unstructured.UnstructuredJSONScheme does
// into an Unstructured (decodeToUnstructured).
func standardObject(data []byte) (map[string]any, error) {
	m := make(map[string]any)
	err := utiljson.Unmarshal(data, &m)
	return m, err
}

// sameJSONValue is reflect.DeepEqual with floats compared by their bits
// (-0 is not 0) and a nil slice or map not equal to an empty one.
func sameJSONValue(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !sameJSONValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSONValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	default:
		return reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
	}
}

// checkDecode compares decodeJSONObject with the standard decoder on
// data; mustDecode requires decodeJSONObject to read data itself.
func checkDecode(t *testing.T, data []byte, mustDecode bool) {
	t.Helper()
	want, wantErr := standardObject(data)
	got, ok := decodeJSONObject(data)
	switch {
	case !ok:
		if mustDecode {
			t.Fatalf("decodeJSONObject(%q) handed over; standard: %v, %v", data, want, wantErr)
		}
	case wantErr != nil:
		t.Fatalf("decodeJSONObject(%q) = %v; the standard decoder fails: %v", data, got, wantErr)
	case !sameJSONValue(got, want):
		t.Fatalf("decodeJSONObject(%q) =\n%#v\nstandard:\n%#v", data, got, want)
	}
}

func TestDecodeJSONObjectFixed(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		must bool
	}{
		{`{}`, true},
		{` {"a":1} `, true},
		{"\t\r\n{\"a\" :\t[ ] ,\"b\": { } }\n", true},
		{`{"a":1,"a":"x"}`, true},
		{`{"n":[0,-0,1,-1,9223372036854775807,-9223372036854775808,9223372036854775808,-9223372036854775809,123456789012345678,1234567890123456789,-123456789012345678]}`, true},
		{`{"f":[0.0,-0.0,1.5,1e3,1E3,1e+3,1e-3,-1.25e-7,0.1,1.0,100000000000000000000000,1.7976931348623157e308,5e-324,2e-400]}`, true},
		{`{"s":["","a\"b","\\","\/","\b\f\n\r\t","\u00e9","\u00E9","\ud83d\ude00","\ud83d","\ud83dx","\ude00","\ud83d\u0041","é","😀"]}`, true},
		{"{\"inv\":\"a\xffb\xc3\"}", true},
		{"{\"\xfe\":1}", true},
		{`{"t":true,"f":false,"n":null}`, true},
		{`{"x":1e400}`, false},
		{`{"x":-1e400}`, false},
		{`null`, false},
		{`[]`, false},
		{`"x"`, false},
		{`1`, false},
		{``, false},
		{`{`, false},
		{`{"a"}`, false},
		{`{"a":}`, false},
		{`{"a":1,}`, false},
		{`{"a":[1,]}`, false},
		{`{"a":01}`, false},
		{`{"a":-}`, false},
		{`{"a":1.}`, false},
		{`{"a":.1}`, false},
		{`{"a":1e}`, false},
		{`{"a":+1}`, false},
		{`{"a":tru}`, false},
		{`{"a":nul}`, false},
		{`{"a":"\x"}`, false},
		{`{"a":"\'"}`, false},
		{`{"a":"\u12"}`, false},
		{`{"a":"\u12g4"}`, false},
		{"{\"a\":\"\x01\"}", false},
		{`{"a":1} x`, false},
		{`{"a":1}{}`, false},
		{`{a:1}`, false},
		{`{"a":1 "b":2}`, false},
		{"{\"a\":1}\x00", false},
		{`{"a":"unterminated}`, false},
		{strings.Repeat(`{"a":`, 1001) + `1` + strings.Repeat(`}`, 1001), false},
		{strings.Repeat(`{"a":`, 999) + `[1]` + strings.Repeat(`}`, 999), true},
	} {
		checkDecode(t, []byte(tc.doc), tc.must)
	}
}

// randomJSON writes a random JSON value of at most depth levels, with
// varied spacing, numbers, strings (escapes, non-ASCII, invalid UTF-8)
// and duplicate keys.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	space := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r", "  \n "}[r.IntN(5)])
		}
	}
	space()
	k := r.IntN(10)
	if depth <= 0 {
		k = 2 + r.IntN(8)
	}
	switch k {
	case 0, 1:
		b.WriteByte('{')
		n := r.IntN(5)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			space()
			randomString(r, b)
			space()
			b.WriteByte(':')
			randomJSON(r, b, depth-1)
		}
		space()
		b.WriteByte('}')
	case 2:
		b.WriteByte('[')
		n := r.IntN(4)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth-1)
		}
		space()
		b.WriteByte(']')
	case 3, 4:
		randomString(r, b)
	case 5, 6, 7:
		randomNumber(r, b)
	default:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	}
	space()
}

func randomString(r *rand.Rand, b *strings.Builder) {
	b.WriteByte('"')
	if r.IntN(3) == 0 {
		// A key as the field manager writes them, or a common one.
		b.WriteString([]string{"f:spec", "metadata", "k:{\\\"name\\\":\\\"x\\\"}", "a", "v:\\\"x\\\"", "."}[r.IntN(6)])
	} else {
		for range r.IntN(8) {
			switch r.IntN(12) {
			case 0:
				b.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[r.IntN(8)])
			case 1:
				fmt.Fprintf(b, `\u%04x`, r.IntN(0x10000))
			case 2:
				fmt.Fprintf(b, `\u%04X\u%04x`, 0xd800+r.IntN(0x800), 0xd800+r.IntN(0x800))
			case 3:
				b.WriteString([]string{"é", "😀", "\u2028", "日本"}[r.IntN(4)])
			case 4:
				b.WriteByte(byte(0x80 + r.IntN(0x80)))
			default:
				// Printable ASCII but a bare quote or backslash (the
				// corruptions bring those).
				c := byte(' ' + r.IntN(0x7f-' '))
				if c == '"' || c == '\\' {
					c = 'q'
				}
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

func randomNumber(r *rand.Rand, b *strings.Builder) {
	if r.IntN(2) == 0 {
		b.WriteByte('-')
	}
	switch r.IntN(3) {
	case 0:
		b.WriteByte('0')
	default:
		b.WriteByte(byte('1' + r.IntN(9)))
		for range r.IntN(22) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(3) == 0 {
		b.WriteByte('.')
		for range 1 + r.IntN(5) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(4) == 0 {
		b.WriteByte("eE"[r.IntN(2)])
		if r.IntN(2) == 0 {
			b.WriteByte("+-"[r.IntN(2)])
		}
		fmt.Fprintf(b, "%d", r.IntN(400))
	}
}

// TestDecodeJSONObjectMatchesStandard compares decodeJSONObject with the
// standard decoder on random objects and on random corruptions of them
// (bytes changed, inserted, removed; truncations).
func TestDecodeJSONObjectMatchesStandard(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 42))
	decoded := 0
	for range 20000 {
		var b strings.Builder
		b.WriteByte('{')
		for i := range 1 + r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomString(r, &b)
			b.WriteByte(':')
			randomJSON(r, &b, 4)
		}
		b.WriteByte('}')
		doc := []byte(b.String())
		checkDecode(t, doc, false)
		if _, ok := decodeJSONObject(doc); ok {
			decoded++
		}
		for range 3 {
			c := append([]byte(nil), doc...)
			i := r.IntN(len(c))
			switch r.IntN(4) {
			case 0:
				chars := `{}[]:,"\ -+.eE0123456789tfnaux`
				c[i] = chars[r.IntN(len(chars))]
			case 1:
				c = append(c[:i], append([]byte{byte(r.IntN(256))}, c[i:]...)...)
			case 2:
				c = append(c[:i], c[i+1:]...)
			default:
				c = c[:i]
			}
			checkDecode(t, c, false)
		}
	}
	// Most random documents are read by decodeJSONObject itself (the
	// rest hold numbers beyond float64's range).
	if decoded < 10000 {
		t.Fatalf("decodeJSONObject read only %d of 20000 random documents itself", decoded)
	}
}

// benchDoc is an object as kapi-bench updates it.
var benchDoc = []byte(`{"apiVersion":"bench.kapi.dev/v1","kind":"BenchThing","metadata":{"creationTimestamp":"2026-11-28T04:00:00Z","generation":12,"managedFields":[{"apiVersion":"bench.kapi.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:n":{},"f:tags":{},"f:text":{}}},"manager":"kapi-bench","operation":"Update","time":"2026-11-28T04:00:00Z"}],"name":"t00001","namespace":"bench","resourceVersion":"123456","uid":"6c3c7d0e-2f9a-4c61-9a43-55b4e0f3e5a1"},"spec":{"n":11,"tags":["a","b","c"],"text":"a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding"}}`)

func BenchmarkDecodeJSONObject(b *testing.B) {
	doc := benchDoc
	b.Run("standard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := standardObject(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeJSONObject(doc); !ok {
				b.Fatal("handed over")
			}
		}
	})
}

// TestStorageCodecDecodesAsStandard compares StorageCodec.Decode into an
// Unstructured (decodeJSONObject) with UnstructuredJSONScheme's decode
// followed by the same read: objects, kinds and errors, after pruning and
// defaulting against a schema.
func TestStorageCodecDecodesAsStandard(t *testing.T) {
	def := apiextensionsv1.JSON{Raw: []byte(`"dflt"`)}
	s := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"n": {Type: "integer"},
			"d": {Type: "string", Default: &def},
		}},
	}}
	c := StorageCodec{Storage: schema.GroupVersion{Group: "g.io", Version: "v1"}, Served: schema.GroupVersion{Group: "g.io", Version: "v1"},
		Schemas: map[string]*apiextensionsv1.JSONSchemaProps{"v1": s}}
	for _, doc := range []string{
		`{"apiVersion":"g.io/v1","kind":"K","metadata":{"name":"a","resourceVersion":"5"},"spec":{"n":3,"x":1e3,"y":[]}}`,
		`{"apiVersion":"g.io/v1","kind":"K","spec":{"n":1.5,"d":"set"},"extra":{"\u00e9":"\ud83d"}}`,
		`{"apiVersion":"g.io/v1","metadata":{}}`,
		`{"kind":""}`,
		`{"apiVersion":"g.io/v1","kind":"K","spec":{"n":1e400}}`,
		`{"apiVersion":"g.io/v1","kind":"K",}`,
		`null`,
		`[1]`,
		``,
	} {
		// StorageCodec.Decode's own path for other targets.
		want, wantGVK, wantErr := unstructured.UnstructuredJSONScheme.Decode([]byte(doc), nil, &unstructured.Unstructured{})
		if wantErr == nil {
			if wantErr = c.read(want.(*unstructured.Unstructured)); wantErr != nil {
				want = nil
			}
		} else {
			want = nil
		}
		u := &unstructured.Unstructured{Object: map[string]any{"stale": true}}
		got, gotGVK, gotErr := c.Decode([]byte(doc), nil, u)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: error %v, standard %v", doc, gotErr, wantErr)
		}
		if !reflect.DeepEqual(gotGVK, wantGVK) {
			t.Fatalf("%s: kind %v, standard %v", doc, gotGVK, wantGVK)
		}
		if wantErr != nil {
			continue
		}
		if got != u || !sameJSONValue(u.Object, want.(*unstructured.Unstructured).Object) {
			t.Fatalf("%s: %#v, standard %#v", doc, got, want)
		}
	}
}

// TestBodyDecoderDecodesAsStandard compares the body decoders
// DecoderToVersion gives (bodyDecoder) with the JSON serializers they
// wrap, strict and not, on fixed bodies and on random ones (kinds or not,
// duplicate keys, corruptions): objects, kinds and errors (strict errors
// included).
func TestBodyDecoderDecodesAsStandard(t *testing.T) {
	ser := NewSerializer()
	info := ser.SupportedMediaTypes()[0]
	gv := schema.GroupVersion{Group: "g.io", Version: "v1"}
	check := func(doc []byte) {
		t.Helper()
		for _, std := range []runtime.Decoder{info.Serializer, info.StrictSerializer} {
			dec := ser.DecoderToVersion(std, gv)
			if _, ok := dec.(bodyDecoder); !ok {
				t.Fatalf("DecoderToVersion gave %T", dec)
			}
			def := gv.WithKind("K")
			wantU := &unstructured.Unstructured{}
			want, wantGVK, wantErr := std.Decode(doc, &def, wantU)
			def = gv.WithKind("K")
			gotU := &unstructured.Unstructured{}
			got, gotGVK, gotErr := dec.Decode(doc, &def, gotU)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || runtime.IsStrictDecodingError(gotErr) != runtime.IsStrictDecodingError(wantErr) {
				t.Fatalf("%q: error %v, standard %v", doc, gotErr, wantErr)
			}
			if !reflect.DeepEqual(gotGVK, wantGVK) {
				t.Fatalf("%q: kind %v, standard %v", doc, gotGVK, wantGVK)
			}
			if (got == nil) != (want == nil) || (got != nil && got != runtime.Object(gotU)) {
				t.Fatalf("%q: object %#v, standard %#v", doc, got, want)
			}
			if !sameJSONValue(gotU.Object, wantU.Object) {
				t.Fatalf("%q: %#v, standard %#v", doc, gotU.Object, wantU.Object)
			}
		}
	}
	for _, doc := range []string{
		`{"apiVersion":"g.io/v1","kind":"K","metadata":{"name":"a"},"spec":{"n":1,"f":1.5,"s":"x\u00e9"}}`,
		`{"apiVersion":"g.io/v1","kind":"K","spec":{"n":1,"n":2}}`,
		`{"apiVersion":"g.io/v1","kind":"K","kind":"K"}`,
		`{"apiVersion":"g.io/v1","metadata":{}}`,
		`{"apiVersion":"g.io/v1","kind":""}`,
		`{"apiVersion":1,"kind":"K"}`,
		`{"apiVersion":"g.io/v1","kind":["K"]}`,
		`{"APIVERSION":"g.io/v1","Kind":"K","kind":"K"}`,
		`{"APIVERSION":1,"kind":"K"}`,
		`{"apiVersion":"g.io/v1","kind":"K","KIND":true}`,
		`{"apiVersion":"g.io/v1","kind":"K","\u212aind":{}}`,
		`{"apiVersion":"g.io/v1","kind":"K","\u212aind":null}`,
		`{"apiVerſion":[],"kind":"K"}`,
		`{"apiVersion":"g.io/v1","kind":"K","kinds":1,"apiVersio":2}`,
		`{"apiVersion":null,"kind":"K"}`,
		`{"apiVersion":"other.io/v2","kind":"L"}`,
		`{"kind":"K"}`,
		`{"apiVersion":"g.io/v1","kind":"K","x":1e400}`,
		`{"apiVersion":"g.io/v1","kind":"K",}`,
		`null`,
		`[]`,
		``,
		"{\"apiVersion\":\"g.io/v1\",\"kind\":\"K\",\"s\":\"\xff\"}",
	} {
		check([]byte(doc))
	}
	r := rand.New(rand.NewPCG(18, 7))
	for range 3000 {
		var b strings.Builder
		b.WriteByte('{')
		if r.IntN(5) > 0 {
			b.WriteString(`"apiVersion":"g.io/v1",`)
		}
		if r.IntN(5) > 0 {
			b.WriteString([]string{`"kind":"K",`, `"kind":"",`, `"kind":3,`}[r.IntN(3)])
		}
		keys := []string{`"a"`, `"b"`, `"spec"`, `"kind"`, `"Kind"`, `"APIVERSION"`, `"\u212aind"`}
		for i := range 1 + r.IntN(3) {
			if i > 0 {
				b.WriteByte(',')
			}
			if r.IntN(3) == 0 {
				b.WriteString(keys[r.IntN(len(keys))])
			} else {
				randomString(r, &b)
			}
			b.WriteByte(':')
			randomJSON(r, &b, 3)
		}
		b.WriteByte('}')
		doc := []byte(b.String())
		check(doc)
		c := append([]byte(nil), doc...)
		c[r.IntN(len(c))] = `{}[]:,"\ -+.eE019tfnux`[r.IntN(22)]
		check(c)
	}
}

func BenchmarkBodyDecoder(b *testing.B) {
	ser := NewSerializer()
	std := ser.SupportedMediaTypes()[0].StrictSerializer
	gvk := schema.GroupVersionKind{Group: "bench.kapi.dev", Version: "v1", Kind: "BenchThing"}
	for _, bc := range []struct {
		name string
		dec  runtime.Decoder
	}{{"standard", std}, {"direct", ser.DecoderToVersion(std, gvk.GroupVersion())}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				def := gvk
				if _, _, err := bc.dec.Decode(benchDoc, &def, &unstructured.Unstructured{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDecodeJSONObject compares decodeJSONObject with the standard decoder
// on arbitrary bytes: it reads request bodies of custom resources, so any
// input must give the standard decoder's object or be handed over to it.
func FuzzDecodeJSONObject(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, `{"a":1.5,"b":[1,"x",true,null,{"c":-0}]}`,
		`{"apiVersion":"v1","kind":"X","metadata":{"name":"n","labels":{"a":"b"}}}`,
		`{"a":"\ud800"}`, `{"a":"\u00e9\n\t\\"}`, `{"a":1e308,"b":123456789012345678901}`,
		`{"a":1,"a":2}`, `[1]`, `{"a":}`, "{\"a\":\"\xff\"}", ` { "a" : [ ] } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data, false)
	})
}
