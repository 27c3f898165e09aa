package openapi

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Paths returns the operations of a group-version of built-in resources
// (or of any server built the way k8s.io/apiserver builds one), under the
// [Installer] rules, with the generated definitions' names.
func (d *Definitions) Paths(gv schema.GroupVersion, resources []Resource) (*Paths, error) {
	return BuildPaths(gv, resources, PathsConfig{Style: Installer, DefinitionName: d.NameForGVK})
}

// DocumentV3 returns the OpenAPI v3 document of a group-version of
// built-in resources: every operation, the schemas they reference and
// the bearer-token security scheme.
func (d *Definitions) DocumentV3(info *spec.Info, gv schema.GroupVersion, resources []Resource) (*spec3.OpenAPI, error) {
	p, err := d.Paths(gv, resources)
	if err != nil {
		return nil, err
	}
	schemas, err := d.SchemasForNames(p.Definitions()...)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 of %s: %w", gv, err)
	}
	scopeCrossRegisteredGVKs(schemas, gv)
	doc := NewDocumentV3(info, p.V3(), schemas)
	doc.Components.SecuritySchemes = BearerTokenSchemes()
	return doc, nil
}

// crossRegisteredKinds are the meta kinds every API group registers
// (metav1.AddToGroupVersion), whose group-version-kind lists would name
// every served group-version.
var crossRegisteredKinds = map[string]bool{"DeleteOptions": true, "WatchEvent": true}

// scopeCrossRegisteredGVKs narrows the group-version-kind list of the
// cross-registered meta kinds among schemas to gv's entry and core v1's,
// as kube-apiserver does for its per-group-version v3 documents
// (filterScopedGVKs, k8s.io/apiserver v0.37.2 pkg/server/routes/openapi.go;
// custom resources' documents are built elsewhere and keep theirs). The
// schemas are shared: a narrowed one is a copy.
func scopeCrossRegisteredGVKs(schemas map[string]*spec.Schema, gv schema.GroupVersion) {
	for name, s := range schemas {
		gvks, ok := s.Extensions[ExtensionGVK].([]any)
		if !ok || len(gvks) <= 1 {
			continue
		}
		if first, ok := gvks[0].(map[string]any); !ok || !crossRegisteredKinds[fmt.Sprint(first["kind"])] {
			continue
		}
		var kept []any
		for _, item := range gvks {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			g, v := fmt.Sprint(m["group"]), fmt.Sprint(m["version"])
			if (g == gv.Group && v == gv.Version) || (g == "" && v == "v1") {
				kept = append(kept, item)
			}
		}
		c := *s
		c.Extensions = maps.Clone(s.Extensions)
		if len(kept) > 0 {
			c.Extensions[ExtensionGVK] = kept
		} else {
			delete(c.Extensions, ExtensionGVK)
		}
		schemas[name] = &c
	}
}

// PartV2 returns a group-version's part of the OpenAPI v2 document: its
// paths, the definitions they reference and the shared parameters they
// reference ([Paths.V2WithSharedParameters]).
func (d *Definitions) PartV2(gv schema.GroupVersion, resources []Resource) (map[string]*spec.PathItem, map[string]*spec.Schema, map[string]spec.Parameter, error) {
	p, err := d.Paths(gv, resources)
	if err != nil {
		return nil, nil, nil, err
	}
	defs, err := d.SchemasV2ForNames(p.Definitions()...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("openapi v2 of %s: %w", gv, err)
	}
	paths, params, err := p.V2WithSharedParameters()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("openapi v2 of %s: %w", gv, err)
	}
	return paths, defs, params, nil
}
