package openapi

import (
	"fmt"

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
// built-in resources: every operation and the schemas they reference.
func (d *Definitions) DocumentV3(info *spec.Info, gv schema.GroupVersion, resources []Resource) (*spec3.OpenAPI, error) {
	p, err := d.Paths(gv, resources)
	if err != nil {
		return nil, err
	}
	schemas, err := d.SchemasForNames(p.Definitions()...)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 of %s: %w", gv, err)
	}
	return NewDocumentV3(info, p.V3(), schemas), nil
}

// PartV2 returns a group-version's part of the OpenAPI v2 document: its
// paths and the definitions they reference.
func (d *Definitions) PartV2(gv schema.GroupVersion, resources []Resource) (map[string]*spec.PathItem, map[string]*spec.Schema, error) {
	p, err := d.Paths(gv, resources)
	if err != nil {
		return nil, nil, err
	}
	defs, err := d.SchemasV2ForNames(p.Definitions()...)
	if err != nil {
		return nil, nil, fmt.Errorf("openapi v2 of %s: %w", gv, err)
	}
	return p.V2(), defs, nil
}
