package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// OpenAPIV3Version is the openapi field of the v3 documents kube-apiserver
// serves.
const OpenAPIV3Version = "3.0.0"

// NewDocumentV3 assembles the OpenAPI v3 document of one group-version, as
// served at /openapi/v3/apis/<group>/<version> (or /openapi/v3/api/v1): the
// given paths (none yet is fine) and schemas, typically the result of
// [Definitions.Schemas] for the group-version's kinds plus
// [Definitions.SchemasForNames] for what its operations reference
// (DeleteOptions, Status, Patch, WatchEvent). A nil info is served as
// {"title": "Kubernetes", "version": "unversioned"}.
func NewDocumentV3(info *spec.Info, paths map[string]*spec3.Path, schemas map[string]*spec.Schema) *spec3.OpenAPI {
	if info == nil {
		info = &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: "unversioned"}}
	}
	if paths == nil {
		paths = map[string]*spec3.Path{}
	}
	if schemas == nil {
		schemas = map[string]*spec.Schema{}
	}
	return &spec3.OpenAPI{
		Version:    OpenAPIV3Version,
		Info:       info,
		Paths:      &spec3.Paths{Paths: paths},
		Components: &spec3.Components{Schemas: schemas},
	}
}
