package schema

import (
	"sort"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Prune removes from obj, a custom resource, the fields its structural
// schema s does not specify, and returns their paths ("spec.foo") sorted.
// It also removes, unreported, the null values whose schema is neither
// nullable nor has a default, as upstream does right after pruning when
// it decodes a custom resource from a request or from storage
// (apiextensions-apiserver v0.37 pkg/apiserver/schema/defaulting
// PruneNonNullableNullsWithoutDefaults, called by unstructuredSchemaCoercer
// in pkg/apiserver/customresource_handler.go): a null with a default is
// left for ApplyDefaults, a null without a schema (an unknown field kept
// by x-kubernetes-preserve-unknown-fields) stays.
// apiVersion, kind and metadata are always kept at the root and in
// x-kubernetes-embedded-resource objects; fields under
// x-kubernetes-preserve-unknown-fields are kept. A nil s prunes nothing
// (a version without a schema).
func Prune(obj map[string]any, s *apiextensionsv1.JSONSchemaProps) []string {
	if s == nil {
		return nil
	}
	var pruned []string
	pruneObject(obj, s, "", true, &pruned)
	sort.Strings(pruned)
	return pruned
}

// pruneValue prunes x, at path, against s.
func pruneValue(x any, s *apiextensionsv1.JSONSchemaProps, path string, pruned *[]string) {
	switch x := x.(type) {
	case map[string]any:
		pruneObject(x, s, path, s != nil && s.XEmbeddedResource, pruned)
	case []any:
		items := Items(s)
		if items == nil && preservesUnknown(s) {
			return
		}
		for i, v := range x {
			pruneValue(v, items, path+"["+strconv.Itoa(i)+"]", pruned)
		}
	}
}

// pruneObject prunes the fields of m; typeMeta keeps apiVersion, kind and
// metadata.
func pruneObject(m map[string]any, s *apiextensionsv1.JSONSchemaProps, path string, typeMeta bool, pruned *[]string) {
	keep := preservesUnknown(s)
	add := AdditionalProperties(s)
	for k, v := range m {
		if typeMeta && (k == "apiVersion" || k == "kind" || k == "metadata") {
			switch ps, ok := propertySchema(s, k); {
			case k == "metadata" && path != "":
				pruneEmbeddedMeta(v, join(path, k), pruned)
			case ok && k != "metadata":
				pruneValue(v, ps, join(path, k), pruned)
			}
			continue
		}
		if ps, ok := propertySchema(s, k); ok {
			if droppedNull(m, k, v, ps) {
				continue
			}
			pruneValue(v, ps, join(path, k), pruned)
			continue
		}
		if add != nil {
			if droppedNull(m, k, v, add) {
				continue
			}
			pruneValue(v, add, path+"["+k+"]", pruned)
			continue
		}
		if keep {
			continue
		}
		delete(m, k)
		*pruned = append(*pruned, join(path, k))
	}
}

// droppedNull removes field k of m when its value v is null and its
// schema s neither nullable nor defaulted (see Prune).
func droppedNull(m map[string]any, k string, v any, s *apiextensionsv1.JSONSchemaProps) bool {
	if v != nil || s.Nullable || s.Default != nil {
		return false
	}
	delete(m, k)
	return true
}

// PruneMetadata removes from the metadata of obj, a custom resource, the
// fields ObjectMeta does not have, and returns their paths
// ("metadata.foo") sorted: upstream drops them when it decodes a custom
// resource (Prune leaves the root's metadata alone).
func PruneMetadata(obj map[string]any) []string {
	var pruned []string
	pruneEmbeddedMeta(obj["metadata"], "metadata", &pruned)
	sort.Strings(pruned)
	return pruned
}

// propertySchema returns s's schema of property k (a copy).
//
// The copy is made only when s has the property: the recursive walks that
// call this take its address, which makes the compiler move the copy to
// the heap, and a copy made before the check cost a JSONSchemaProps
// allocation for every field of every object pruned, defaulted or
// validated, properties or not (~10% of the bytes allocated per update of
// a custom resource with x-kubernetes-preserve-unknown-fields).
func propertySchema(s *apiextensionsv1.JSONSchemaProps, k string) (*apiextensionsv1.JSONSchemaProps, bool) {
	if s == nil || len(s.Properties) == 0 {
		return nil, false
	}
	if _, ok := s.Properties[k]; !ok {
		return nil, false
	}
	p := new(apiextensionsv1.JSONSchemaProps)
	*p = s.Properties[k]
	return p, true
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// objectMetaFields are the JSON fields of metav1.ObjectMeta.
var objectMetaFields = map[string]bool{
	"name": true, "generateName": true, "namespace": true, "selfLink": true,
	"uid": true, "resourceVersion": true, "generation": true,
	"creationTimestamp": true, "deletionTimestamp": true,
	"deletionGracePeriodSeconds": true, "labels": true, "annotations": true,
	"ownerReferences": true, "finalizers": true, "managedFields": true,
}

// pruneEmbeddedMeta prunes the metadata of an embedded resource to the
// fields of ObjectMeta.
func pruneEmbeddedMeta(v any, path string, pruned *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k := range m {
		if !objectMetaFields[k] {
			delete(m, k)
			*pruned = append(*pruned, join(path, k))
		}
	}
}
