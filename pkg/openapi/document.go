package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/version"
)

// OpenAPIV3Version is the openapi field of the v3 documents kube-apiserver
// serves.
const OpenAPIV3Version = "3.0.0"

// InfoVersion is the info.version of kube-apiserver's documents: its
// emulation version, major.minor ("1.37"; k8s.io/apiserver v0.37.2
// pkg/server/config.go, completeOpenAPI and completeOpenAPIV3, take the
// emulation version's String() up to any "-").
func InfoVersion() string {
	v := version.Get()
	return v.EmulationMajor + "." + v.EmulationMinor
}

// KubernetesInfo is the info of kube-apiserver's documents (all but those
// of custom resources): {"title": "Kubernetes", "version": "1.37"}.
func KubernetesInfo() *spec.Info {
	return &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: InfoVersion()}}
}

// BearerTokenSchemes are the security schemes of kube-apiserver's v3
// documents (all but those of custom resources) when it authenticates
// bearer tokens, as kapi always does (service-account tokens);
// k8s.io/kubernetes v1.37.2 pkg/kubeapiserver/authenticator/config.go.
func BearerTokenSchemes() spec3.SecuritySchemes {
	return spec3.SecuritySchemes{"BearerToken": &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
		Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
	}}}
}

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
