package schema

import (
	"maps"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateListSetsAndMaps checks the invariants of the arrays of obj, a
// custom resource, that its structural schema s marks
// x-kubernetes-list-type set (unique items) or map (unique keys, items
// objects), as upstream's structurallisttype.ValidateListSetsAndMaps
// (apiextensions-apiserver v0.37 pkg/apiserver/schema/listtype): the
// second occurrence of a value (not the third) is a Duplicate of that
// value, or of the item's keys for a map. Upstream walks object fields in
// map order; here they are walked sorted, so that the errors come in one
// order.
func ValidateListSetsAndMaps(obj map[string]any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	return validateListsInObject(nil, obj, s)
}

func validateListsInObject(p *field.Path, obj map[string]any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	if s == nil || obj == nil {
		return nil
	}
	add := AdditionalProperties(s)
	if add == nil && len(s.Properties) == 0 {
		return nil // no schema for any field (x-kubernetes-preserve-unknown-fields alone)
	}
	var errs field.ErrorList
	keys := slices.Sorted(maps.Keys(obj))
	if add != nil {
		for _, k := range keys {
			errs = append(errs, validateListsIn(p.Key(k), obj[k], add)...)
		}
	}
	if len(s.Properties) > 0 {
		for _, k := range keys {
			if ps, ok := propertySchema(s, k); ok {
				errs = append(errs, validateListsIn(p.Child(k), obj[k], ps)...)
			}
		}
	}
	return errs
}

func validateListsIn(p *field.Path, v any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	switch v := v.(type) {
	case []any:
		return validateListsInArray(p, v, s)
	case map[string]any:
		return validateListsInObject(p, v, s)
	}
	return nil
}

func validateListsInArray(p *field.Path, list []any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	var errs field.ErrorList
	if s.XListType != nil {
		switch *s.XListType {
		case "set":
			dups, err := duplicates(p, list)
			if err != nil {
				errs = append(errs, err)
				break
			}
			for _, i := range dups {
				errs = append(errs, field.Duplicate(p.Index(i), list[i]))
			}
		case "map":
			errs = append(errs, validateListMap(p, list, s.XListMapKeys)...)
		}
	}
	if items := Items(s); items != nil {
		for i, v := range list {
			errs = append(errs, validateListsIn(p.Index(i), v, items)...)
		}
	}
	return errs
}

// unspecifiedKey stands for an item's missing key (or a null item) among
// the keys of a one-key list map.
type unspecifiedKey struct{}

// validateListMap: items are objects (or null), their keys unique.
func validateListMap(p *field.Path, list []any, keyFields []string) field.ErrorList {
	for i, x := range list {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return field.ErrorList{field.Invalid(p.Index(i), x, "must be an object for an array of list-type map")}
		}
	}
	if len(list) <= 1 {
		return nil
	}
	keys := make([]any, len(list))
	for i, x := range list {
		m, _ := x.(map[string]any)
		if len(keyFields) == 1 {
			k, ok := m[keyFields[0]]
			if !ok {
				keys[i] = unspecifiedKey{}
				continue
			}
			keys[i] = k
			continue
		}
		key := map[string]any{}
		for _, f := range keyFields {
			if k, ok := m[f]; ok {
				key[f] = k
			}
		}
		keys[i] = key
	}
	dups, err := duplicates(p, keys)
	if err != nil {
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for _, i := range dups {
		switch k := keys[i].(type) {
		case unspecifiedKey:
			errs = append(errs, field.Duplicate(p.Index(i), map[string]any{}))
		case map[string]any:
			errs = append(errs, field.Duplicate(p.Index(i), k))
		default:
			errs = append(errs, field.Duplicate(p.Index(i), map[string]any{keyFields[0]: k}))
		}
	}
	return errs
}

// duplicates returns the indices of the second occurrences of values in
// list (compared as JSON for objects and arrays).
func duplicates(p *field.Path, list []any) ([]int, *field.Error) {
	if len(list) <= 1 {
		return nil, nil
	}
	seenScalars := make(map[any]int, len(list))
	seenCompounds := make(map[string]int, len(list))
	var out []int
	for i, x := range list {
		switch x.(type) {
		case map[string]any, []any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, field.Invalid(p.Index(i), x, "internal error")
			}
			seenCompounds[string(b)]++
			if seenCompounds[string(b)] == 2 {
				out = append(out, i)
			}
		default:
			seenScalars[x]++
			if seenScalars[x] == 2 {
				out = append(out, i)
			}
		}
	}
	return out, nil
}
