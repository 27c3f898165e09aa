package customresource

import (
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// PruneUnknownFields removes from obj, a custom resource of a version
// whose structural schema is s (nil: no schema), the fields s does not
// declare and the fields of its metadata that ObjectMeta does not have,
// and returns their paths ("spec.foo", "metadata.bar") sorted. The write
// handlers call it, through the stores, before the field manager sees an
// object (handlers.UnknownFieldPruner).
func PruneUnknownFields(obj runtime.Object, s *apiextensionsv1.JSONSchemaProps) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	pruned := append(structuralschema.PruneMetadata(u.Object), structuralschema.Prune(u.Object, s)...)
	sort.Strings(pruned)
	return pruned
}

// StatusStore is the /status subresource of a version.
type StatusStore struct {
	*generic.StatusREST
	schema *apiextensionsv1.JSONSchemaProps // structural schema, or nil
}

// NewStatusStore returns the /status subresource of store, whose
// strategy is strategy.
func NewStatusStore(store *generic.Store, strategy Strategy) *StatusStore {
	return &StatusStore{StatusREST: generic.NewStatusREST(store, strategy.StatusStrategy()), schema: strategy.schema}
}

// PruneUnknownFields implements handlers.UnknownFieldPruner: the whole
// object is pruned, as upstream decodes it.
func (s *StatusStore) PruneUnknownFields(obj runtime.Object) []string {
	return PruneUnknownFields(obj, s.schema)
}

// DefaultDecoded implements handlers.DecodedDefaulter: the whole object
// is defaulted, as upstream decodes it.
func (s *StatusStore) DefaultDecoded(obj runtime.Object) {
	DefaultDecoded(obj, s.schema)
}

// DefaultDecoded applies the defaults of s (a version's structural
// schema; nil: none) to obj, a custom resource decoded from a request.
func DefaultDecoded(obj runtime.Object, s *apiextensionsv1.JSONSchemaProps) {
	if u, ok := obj.(*unstructured.Unstructured); ok && s != nil {
		structuralschema.ApplyDefaults(u.Object, s)
	}
}
