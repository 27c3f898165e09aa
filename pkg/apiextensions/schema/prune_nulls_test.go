package schema

import (
	"reflect"
	"testing"
)

// TestPruneNulls: Prune drops nulls as upstream's
// PruneNonNullableNullsWithoutDefaults (apiextensions-apiserver v0.37
// pkg/apiserver/schema/defaulting/prunenulls.go): a null goes when its
// schema is neither nullable nor defaulted, in properties, array items and
// additionalProperties values; nulls with a default or nullable schema,
// and nulls without a schema, stay.
func TestPruneNulls(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"non-nullable without default goes", `{"spec":{"port":null,"replicas":1}}`, `{"spec":{"replicas":1}}`},
		{"defaulted stays for ApplyDefaults", `{"spec":{"tier":null,"replicas":null}}`, `{"spec":{"tier":null,"replicas":null}}`},
		{"nullable stays", `{"spec":{"mode":null}}`, `{"spec":{"mode":null}}`},
		{"array items", `{"spec":{"list":[{"name":null,"prio":null},null]}}`, `{"spec":{"list":[{"prio":null},null]}}`},
		{"additionalProperties values", `{"spec":{"labels":{"a":null,"b":{"v":null,"on":null}}}}`, `{"spec":{"labels":{"b":{"on":null}}}}`},
		{"unknown fields under preserve-unknown-fields stay", `{"spec":{"free":{"x":null,"known":{"k":null}}}}`, `{"spec":{"free":{"x":null,"known":{}}}}`},
		{"a whole object", `{"spec":null}`, `{}`},
		{"metadata fields stay", `{"metadata":{"creationTimestamp":null}}`, `{"metadata":{"creationTimestamp":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.in)
			if pruned := Prune(obj, testSchema()); len(pruned) != 0 {
				t.Errorf("got pruned %q, want nulls dropped unreported", pruned)
			}
			if want := decode(t, tc.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("got %v, want %v", obj, want)
			}
		})
	}
}
