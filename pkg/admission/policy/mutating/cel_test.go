package mutating

import (
	"reflect"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"

	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
)

type celProgram = cel.Program

var (
	compileApply     = CompileApplyConfiguration
	compileJSONPatch = CompileJSONPatch
)

func pod() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "labels": map[string]any{"app": "x"}},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "image": "busybox"},
			map[string]any{"name": "side", "image": "busybox"},
		}},
	}
}

func builtins(t testing.TB) managedfields.TypeConverter {
	tc, err := fieldmanager.TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// eval compiles and evaluates a mutation against obj, returning its JSON
// form.
func eval(t testing.TB, compile func(string) (celProgram, error), expr string, obj map[string]any) any {
	t.Helper()
	prg, err := compile(expr)
	if err != nil {
		t.Fatalf("compile %s: %v", expr, err)
	}
	out, _, err := prg.Eval(map[string]any{"object": obj, "variables": map[string]any{}})
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	v, err := jsonOf(out)
	if err != nil {
		t.Fatalf("json of %s: %v", expr, err)
	}
	return v
}

func TestApplyConfiguration(t *testing.T) {
	tc := builtins(t)
	for _, tc2 := range []struct {
		name, expr string
		check      func(map[string]any) bool
		err        string
	}{
		{"labels merged", `Object{metadata: Object.metadata{labels: {"b": "y"}}}`, func(o map[string]any) bool {
			return reflect.DeepEqual(o["metadata"].(map[string]any)["labels"], map[string]any{"app": "x", "b": "y"})
		}, ""},
		{"list map item merged by key", `Object{spec: Object.spec{containers: [Object.spec.containers{name: "side", image: "nginx"}]}}`, func(o map[string]any) bool {
			cs := o["spec"].(map[string]any)["containers"].([]any)
			return len(cs) == 2 && cs[0].(map[string]any)["image"] == "busybox" && cs[1].(map[string]any)["image"] == "nginx"
		}, ""},
		{"list map item added", `Object{spec: Object.spec{containers: [Object.spec.containers{name: "new", image: "nginx"}]}}`, func(o map[string]any) bool {
			return len(o["spec"].(map[string]any)["containers"].([]any)) == 3
		}, ""},
		{"integer", `Object{spec: Object.spec{terminationGracePeriodSeconds: 5}}`, func(o map[string]any) bool {
			return o["spec"].(map[string]any)["terminationGracePeriodSeconds"] == int64(5)
		}, ""},
		{"atomic map", `Object{spec: Object.spec{nodeSelector: {"a": "b"}}}`, nil,
			"invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: spec.nodeSelector"},
		{"atomic list", `Object{spec: Object.spec{containers: [Object.spec.containers{name: "app", args: ["x"]}]}}`, nil,
			"invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: spec.containers[0].args"},
		{"unknown field", `Object{spec: Object.spec{nope: 1}}`, nil, "invalid ApplyConfiguration: "},
	} {
		t.Run(tc2.name, func(t *testing.T) {
			patch := eval(t, compileApply, tc2.expr, pod()).(map[string]any)
			got, err := applyConfiguration(tc, pod(), patch)
			if tc2.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc2.err) {
					t.Fatalf("got %v, want %q", err, tc2.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc2.check(got) {
				t.Errorf("result %v", got)
			}
		})
	}
}

// TestApplyConfigurationCustomResource: kinds the type converter does
// not know are merged with the deduced schema: maps granular, lists
// atomic (as a CRD's lists without x-kubernetes-list-type), so setting a
// list is refused.
func TestApplyConfigurationCustomResource(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"size": int64(1), "tags": []any{"a"}}}
	}
	patch := eval(t, compileApply, `Object{spec: Object.spec{color: "red"}}`, obj()).(map[string]any)
	got, err := applyConfiguration(builtins(t), obj(), patch)
	if err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if spec["size"] != int64(1) || spec["color"] != "red" || !reflect.DeepEqual(spec["tags"], []any{"a"}) {
		t.Errorf("spec %v", spec)
	}
	patch = eval(t, compileApply, `Object{spec: Object.spec{tags: ["b"]}}`, obj()).(map[string]any)
	_, err = applyConfiguration(builtins(t), obj(), patch)
	if want := "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: spec.tags"; err == nil || err.Error() != want {
		t.Errorf("list: %v, want %q", err, want)
	}
}

func TestJSONPatch(t *testing.T) {
	ops := eval(t, compileJSONPatch, `[
		JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/a~b"), value: "v"},
		JSONPatch{op: "replace", path: "/spec/containers/0/image", value: "nginx"},
		JSONPatch{op: "add", path: "/spec/containers/-", value: Object.spec.containers{name: "third", image: "x"}},
		JSONPatch{op: "remove", path: "/metadata/labels/app"}
	]`, pod()).([]any)
	got, err := applyJSONPatch(pod(), ops)
	if err != nil {
		t.Fatal(err)
	}
	labels := got["metadata"].(map[string]any)["labels"]
	cs := got["spec"].(map[string]any)["containers"].([]any)
	if !reflect.DeepEqual(labels, map[string]any{"example.com/a~b": "v"}) || len(cs) != 3 || cs[0].(map[string]any)["image"] != "nginx" {
		t.Errorf("got %v", got)
	}
	for _, tc := range []struct{ expr, err string }{
		{`[JSONPatch{op: "test", path: "/metadata/name", value: "q"}]`, "JSONPatch: "},
		{`[JSONPatch{op: "frobnicate", path: "/x"}]`, `JSONPatch operation 0: unsupported op "frobnicate"`},
		{`[JSONPatch{op: "remove", path: "/nope"}]`, "JSONPatch: "},
	} {
		ops := eval(t, compileJSONPatch, tc.expr, pod()).([]any)
		if _, err := applyJSONPatch(pod(), ops); err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want %q", tc.expr, err, tc.err)
		}
	}
}

func TestEscapeKey(t *testing.T) {
	got := eval(t, func(e string) (celProgram, error) { return CompileVariable(e) }, `jsonpatch.escapeKey("a/b~c")`, pod())
	if got != "a~1b~0c" {
		t.Errorf("escapeKey = %v, want a~1b~0c", got)
	}
}

// FuzzMutation: any expression that compiles evaluates and applies (or
// fails) without panicking.
func FuzzMutation(f *testing.F) {
	for _, s := range []string{
		`Object{metadata: Object.metadata{labels: {"a": "b"}}}`,
		`Object{spec: Object.spec{containers: [Object.spec.containers{name: "x"}]}}`,
		`[JSONPatch{op: "add", path: "/metadata/labels/x", value: 1}]`,
		`[JSONPatch{op: "move", from: "/spec", path: "/status"}]`,
		`Object{spec: object.spec}`,
		`[JSONPatch{op: "copy", from: "/metadata", path: "/metadata/labels/x"}]`,
	} {
		f.Add(s)
	}
	tc := builtins(f)
	f.Fuzz(func(t *testing.T, expr string) {
		for _, compile := range []func(string) (celProgram, error){compileApply, compileJSONPatch} {
			prg, err := compile(expr)
			if err != nil {
				continue
			}
			out, _, err := prg.Eval(map[string]any{"object": pod(), "variables": map[string]any{}})
			if err != nil {
				continue
			}
			v, err := jsonOf(out)
			if err != nil {
				continue
			}
			switch x := v.(type) {
			case map[string]any:
				_, _ = applyConfiguration(tc, pod(), x)
			case []any:
				_, _ = applyJSONPatch(pod(), x)
			}
		}
	})
}

// TestLiterals: list and map literals may mix dyn values with typed ones
// (object fields and variables are dyn here), not two different types.
func TestLiterals(t *testing.T) {
	if _, err := CompileApplyConfiguration(`Object{metadata: Object.metadata{labels: {"a": object.metadata.name, "b": "x"}}}`); err != nil {
		t.Errorf("dyn and string values: %v", err)
	}
	if _, err := CompileVariable(`[object.metadata.name, "x", variables.y]`); err != nil {
		t.Errorf("dyn and string elements: %v", err)
	}
	_, err := CompileVariable(`{"a": "x", "b": 1}`)
	if err == nil || !strings.Contains(err.Error(), "expected type 'string' but found 'int'") {
		t.Errorf("string and int values: %v", err)
	}
	_, err = CompileVariable(`[1, object.x, "a"]`)
	if err == nil || !strings.Contains(err.Error(), "expected type 'int' but found 'string'") {
		t.Errorf("int and string elements: %v", err)
	}
}
