package apiextensions

import (
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	apiVersionDesc = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDesc       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// crdVersion returns crd's version called name, or nil.
func crdVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

// kindDefinitions completes item (a version's schema, nil if it has none)
// into the definition of crd's kind in version gv and builds the
// definition of its list, both named and shaped as upstream's builder
// publishes them, in OpenAPI v2 or v3: ref makes a reference to another
// definition in the document's own form. As upstream, a kind without a
// schema is only an object, and so is, in v2, one whose unknown fields
// are preserved at the root: kubectl's client-side validation would
// otherwise reject every field but apiVersion, kind and metadata.
func kindDefinitions(gv schema.GroupVersion, crd *apiextensionsv1.CustomResourceDefinition, item *spec.Schema, v2 bool,
	ref func(name, desc string) spec.Schema) (itemName, listName string, outItem, list *spec.Schema) {
	names := crd.Status.AcceptedNames
	str := func(desc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Description: desc}}
	}
	gvk := func(kind string) []any {
		return []any{map[string]any{"group": gv.Group, "version": gv.Version, "kind": kind}}
	}
	preserved := false
	if item != nil {
		preserved, _ = item.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
	}
	if item == nil || (v2 && (preserved || crd.Spec.PreserveUnknownFields)) {
		item = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	} else {
		item.Type = spec.StringOrArray{"object"}
		if item.Properties == nil {
			item.Properties = map[string]spec.Schema{}
		}
		item.Properties["apiVersion"] = str(apiVersionDesc)
		item.Properties["kind"] = str(kindDesc)
		item.Properties["metadata"] = ref(objectMetaName, "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
	}
	item.AddExtension("x-kubernetes-group-version-kind", gvk(names.Kind))
	itemName = customresource.DefinitionName(gv, names.Kind)

	itemRef := ref(itemName, "")
	list = &spec.Schema{SchemaProps: spec.SchemaProps{
		Description: names.ListKind + " is a list of " + names.Kind,
		Type:        spec.StringOrArray{"object"},
		Required:    []string{"items"},
		Properties: map[string]spec.Schema{
			"apiVersion": str(apiVersionDesc),
			"kind":       str(kindDesc),
			"items": {SchemaProps: spec.SchemaProps{
				Description: "List of " + names.Plural + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				Type:        spec.StringOrArray{"array"},
				Items:       &spec.SchemaOrArray{Schema: &itemRef},
			}},
			"metadata": ref(listMetaName, "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"),
		},
	}}
	list.AddExtension("x-kubernetes-group-version-kind", gvk(names.ListKind))
	return itemName, customresource.DefinitionName(gv, names.ListKind), item, list
}
