package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// countItems agrees with encoding/json on the number of items of valid
// lists (items of every JSON type, keys and strings that look like items
// arrays, escapes), and refuses malformed or item-less bodies.
func TestCountItems(t *testing.T) {
	for _, doc := range []string{
		`{"items":[]}`,
		`{"apiVersion":"v1","items":[{"a":1},{"b":[1,2,{"items":[1,2,3]}]}],"kind":"L","metadata":{}}`,
		`{"kind":"L","metadata":{"items":"[1,2]"},"items":[1,"x",true,null,-2.5e3,[],{}]}`,
		`{"a":"\"items\":[1,2,3]","items" : [ "\\\"" , "]" , "[" , "}{" ] , "z":{"items":[9]}}`,
		` {"x":[{"items":[1]}],"items":[{"items":[]}]} `,
		`{"apiVersion":"bench.kapi.dev/v1","items":[` + strings.Repeat(`{"metadata":{"name":"t\u00e9"},"spec":{"tags":["a","b"]}},`, 99) + `{}]}`,
	} {
		var v struct{ Items []json.RawMessage }
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, err := countItems([]byte(doc))
		if err != nil || got != len(v.Items) {
			t.Errorf("%.80s: %d, %v; want %d", doc, got, err, len(v.Items))
		}
	}
	for _, bad := range []string{``, `{"kind":"L"}`, `{"items":null}`, `{"items":[1,2]`, `{"items":["a]}`, `{"items":[]}}`, `{"a":{"items":[1]}}`} {
		if n, err := countItems([]byte(bad)); err == nil {
			t.Errorf("%q: %d items, want an error", bad, n)
		}
	}
}
