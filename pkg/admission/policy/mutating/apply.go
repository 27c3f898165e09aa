package mutating

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// toJSON converts a CEL value to its JSON form (maps, slices, strings,
// int64, float64, bool, nil).
func toJSON(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return int64(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(x), nil
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339), nil
	case types.Duration:
		return x.Duration.String(), nil
	case *types.Err:
		return nil, x
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			e, err := toJSON(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = e
		}
		return out, nil
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			e, err := toJSON(x.Get(i))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %s", errNotJSON, v.Type())
}

// applyConfiguration merges the apply configuration patch into obj with
// server-side apply's merge semantics (structured-merge-diff, the
// kind's schema from tc), as upstream's ApplyStructuredMergeDiff: the
// configuration may not set atomic lists, maps or structs.
func applyConfiguration(tc managedfields.TypeConverter, obj, patch map[string]any) (map[string]any, error) {
	patch["apiVersion"], patch["kind"] = obj["apiVersion"], obj["kind"]
	patchTyped, err := toTyped(tc, patch)
	if err != nil {
		return nil, fmt.Errorf("invalid ApplyConfiguration: %w", err)
	}
	if err := validatePatch(patchTyped); err != nil {
		return nil, err
	}
	liveTyped, err := toTyped(tc, obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert object to typed value: %w", err)
	}
	merged, err := liveTyped.Merge(patchTyped)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	out, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, errors.New("error applying patch: result is not an object")
	}
	return out, nil
}

// toTyped reads obj with tc, or, for kinds tc does not know (custom
// resources), with the deduced schema (maps merged, lists atomic).
func toTyped(tc managedfields.TypeConverter, obj map[string]any) (*typed.TypedValue, error) {
	u := &unstructured.Unstructured{Object: obj}
	if tc != nil {
		v, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
		if err == nil || !runtime.IsNotRegisteredError(err) {
			return v, err
		}
	}
	return managedfields.NewDeducedTypeConverter().ObjectToTyped(u)
}

// validatePatch refuses an apply configuration that sets an atomic list,
// map or struct (it would replace the whole value), naming the first one.
func validatePatch(v *typed.TypedValue) error {
	var walk func(val value.Value, tr smdschema.TypeRef, path string) error
	s := v.Schema()
	walk = func(val value.Value, tr smdschema.TypeRef, path string) error {
		if val == nil || val.IsNull() {
			return nil
		}
		atom, ok := s.Resolve(tr)
		if !ok {
			return nil
		}
		switch {
		case atom.List != nil && val.IsList():
			if atom.List.ElementRelationship == smdschema.Atomic {
				return atomicError(path)
			}
			l := val.AsList()
			for i := 0; i < l.Length(); i++ {
				if err := walk(l.At(i), atom.List.ElementType, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		case atom.Map != nil && val.IsMap():
			if atom.Map.ElementRelationship == smdschema.Atomic {
				return atomicError(path)
			}
			var err error
			val.AsMap().Iterate(func(k string, fv value.Value) bool {
				ft := atom.Map.ElementType
				if f, ok := atom.Map.FindField(k); ok {
					ft = f.Type
				}
				err = walk(fv, ft, path+"."+k)
				return err == nil
			})
			return err
		}
		return nil
	}
	return walk(v.AsValue(), v.TypeRef(), "")
}

func atomicError(path string) error {
	return fmt.Errorf("invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %s", strings.TrimPrefix(path, "."))
}

// applyJSONPatch applies the operations of a JSONPatch expression's
// result to obj.
func applyJSONPatch(obj map[string]any, ops []any) (map[string]any, error) {
	for i, op := range ops {
		m, ok := op.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("JSONPatch operation %d is not a JSONPatch", i)
		}
		switch m["op"] {
		case "add", "remove", "replace", "move", "copy", "test":
		default:
			return nil, fmt.Errorf("JSONPatch operation %d: unsupported op %q", i, m["op"])
		}
	}
	patchJSON, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("JSONPatch: %w", err)
	}
	p, err := jsonpatch.DecodePatch(patchJSON)
	if err != nil {
		return nil, fmt.Errorf("JSONPatch: %w", err)
	}
	objJSON, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	patched, err := p.Apply(objJSON)
	if err != nil {
		return nil, fmt.Errorf("JSONPatch: %w", err)
	}
	v, err := decodeJSON(patched)
	if err != nil {
		return nil, fmt.Errorf("JSONPatch: %w", err)
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("JSONPatch: the result is not an object")
	}
	return out, nil
}
