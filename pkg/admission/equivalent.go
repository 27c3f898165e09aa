package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Equivalent is another group-version-resource (and its kind) that
// serves the same objects as a requested one: matchPolicy Equivalent of
// webhooks and admission policies matches a rule written for it, the
// objects converted to its version.
type Equivalent struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
}

// Equivalents returns the other group-versions gvr is served as, with
// the request's subresource's kind (upstream's
// EquivalentResourceMapper.EquivalentResourcesFor and KindFor). A
// subresource whose kind is not the resource's (scale: autoscaling/v1
// Scale in every version) keeps the request's kind: its objects are not
// converted.
func Equivalents(eqs func(schema.GroupVersionResource) []Equivalent, a *Attributes) []Equivalent {
	if eqs == nil {
		return nil
	}
	out := eqs(a.Resource)
	if a.Subresource == "" {
		return out
	}
	for i := range out {
		if out[i].Kind.GroupKind() != a.Kind.GroupKind() {
			out[i].Kind = a.Kind
		}
	}
	return out
}

// Converter converts an object to another version of its kind.
type Converter func(ctx context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
