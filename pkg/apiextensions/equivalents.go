package apiextensions

import (
	"context"
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CustomResources tells admission which versions serve a custom resource
// and converts custom resources between them, for matchPolicy Equivalent
// of admission webhooks and policies (upstream's
// EquivalentResourceRegistry, which the CRD handler fills, and the CRD's
// converter). Install binds it to the server ([Config].CustomResources);
// unbound, it knows no custom resource. Safe for concurrent use.
type CustomResources struct {
	s atomic.Pointer[crServer]
}

// Versions returns the kinds of the served versions of the custom
// resource gr, in the order of the CRD's spec.versions (as upstream
// registers them); nil when gr is not a served custom resource.
func (c *CustomResources) Versions(gr schema.GroupResource) []schema.GroupVersionKind {
	s := c.s.Load()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	crd := s.crds[gr.Resource+"."+gr.Group]
	if crd == nil || crd.crd.Spec.Group != gr.Group {
		return nil
	}
	out := make([]schema.GroupVersionKind, 0, len(crd.versions))
	for _, v := range crd.crd.Spec.Versions {
		if _, served := crd.versions[v.Name]; served {
			out = append(out, schema.GroupVersionKind{Group: gr.Group, Version: v.Name, Kind: crd.crd.Status.AcceptedNames.Kind})
		}
	}
	return out
}

// Convert converts a custom resource to another version of its CRD
// with the CRD's conversion (strategy None or Webhook).
func (c *CustomResources) Convert(ctx context.Context, obj *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error) {
	s := c.s.Load()
	if s == nil {
		return nil, fmt.Errorf("no custom resource server")
	}
	s.mu.Lock()
	var crd *crdServing
	for _, cs := range s.crds {
		if cs.crd.Spec.Group == to.Group && cs.crd.Status.AcceptedNames.Kind == obj.GetKind() {
			crd = cs
			break
		}
	}
	s.mu.Unlock()
	if crd == nil || crd.converter == nil {
		return nil, fmt.Errorf("%s is not a served custom resource kind", to.WithKind(obj.GetKind()))
	}
	return crd.converter.ConvertObject(ctx, obj, to)
}
