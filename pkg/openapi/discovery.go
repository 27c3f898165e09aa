package openapi

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
)

// Root is one of the paths kube-apiserver serves besides its resources'
// whose operation its OpenAPI documents publish: the discovery roots
// (/api/, /apis/, /apis/<group>/), /version/ and service-account issuer
// discovery. Each has a v3 document of its own (its Key under
// /openapi/v3) and is a path of the v2 document.
type Root struct {
	// Key is the document's path under /openapi/v3: "api", "apis",
	// "apis/apps", "version", ".well-known/openid-configuration".
	Key  string
	path string
	op   *operation
}

// DiscoveryMediaTypes are what discovery answers in and reads.
var DiscoveryMediaTypes = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf}

// LegacyRoot is /api/, which lists the legacy group's versions (an
// APIVersions), as k8s.io/apiserver's legacy root discovery publishes it.
func LegacyRoot() Root {
	return Root{Key: "api", path: "/api/", op: &operation{
		id: "getCoreAPIVersions", description: "get available API versions", tag: "core",
		consumes: DiscoveryMediaTypes, produces: DiscoveryMediaTypes,
		responses: []response{{code: 200, description: "OK", definition: NameForObject(&metav1.APIVersions{})}, {code: 401, description: "Unauthorized"}},
	}}
}

// GroupsRoot is /apis/, which lists the groups (an APIGroupList).
func GroupsRoot() Root {
	return Root{Key: "apis", path: "/apis/", op: &operation{
		id: "getAPIVersions", description: "get available API versions", tag: "apis",
		consumes: DiscoveryMediaTypes, produces: DiscoveryMediaTypes,
		responses: []response{{code: 200, description: "OK", definition: NameForObject(&metav1.APIGroupList{})}, {code: 401, description: "Unauthorized"}},
	}}
}

// GroupRoot is /apis/<group>/, which describes a group (an APIGroup), as
// the installer publishes it for every group it serves (not for custom
// resources' groups: apiextensions-apiserver serves those without
// OpenAPI).
func GroupRoot(group string) Root {
	return Root{Key: "apis/" + group, path: "/apis/" + group + "/", op: &operation{
		id:          "get" + camelID(groupID(group), true) + "APIGroup",
		description: "get information of a group", tag: camelID(groupID(group), false),
		consumes: DiscoveryMediaTypes, produces: DiscoveryMediaTypes,
		responses: []response{{code: 200, description: "OK", definition: NameForObject(&metav1.APIGroup{})}, {code: 401, description: "Unauthorized"}},
	}}
}

// VersionRoot is /version/, the server's version (a version.Info).
func VersionRoot() Root {
	json := []string{runtime.ContentTypeJSON}
	return Root{Key: "version", path: "/version/", op: &operation{
		id: "getCodeVersion", description: "get the version information for this server", tag: "version",
		consumes: json, produces: json,
		responses: []response{{code: 200, description: "OK", definition: NameForObject(&version.Info{})}, {code: 401, description: "Unauthorized"}},
	}}
}

// ServiceAccountIssuerRoots are the two documents of service-account
// issuer discovery (k8s.io/kubernetes v1.37.2
// pkg/routes/openidmetadata.go), published when they are served.
func ServiceAccountIssuerRoots() []Root {
	return []Root{
		{Key: ".well-known/openid-configuration", path: "/.well-known/openid-configuration/", op: &operation{
			id:          "getServiceAccountIssuerOpenIDConfiguration",
			description: "get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'", tag: "WellKnown",
			produces:  []string{runtime.ContentTypeJSON},
			responses: []response{{code: 200, description: "OK", typ: "string"}, {code: 401, description: "Unauthorized"}},
		}},
		{Key: "openid/v1/jwks", path: "/openid/v1/jwks/", op: &operation{
			id:          "getServiceAccountIssuerOpenIDKeyset",
			description: "get service account issuer OpenID JSON Web Key Set (contains public token verification keys)", tag: "openid",
			produces:  []string{"application/jwk-set+json"},
			responses: []response{{code: 200, description: "OK", typ: "string"}, {code: 401, description: "Unauthorized"}},
		}},
	}
}

// paths returns r's operation as Paths.
func (r Root) paths() *Paths {
	p := &Paths{items: map[string]*pathItem{r.path: {ops: map[string]*operation{"get": r.op}}}, refs: map[string]bool{}}
	for _, resp := range r.op.responses {
		if resp.definition != "" {
			p.refs[resp.definition] = true
		}
	}
	return p
}

// documentV3 returns r's v3 document: its operation, the schemas it
// references and the bearer-token security scheme.
func (r Root) documentV3(d *Definitions) ([]byte, error) {
	p := r.paths()
	schemas, err := d.SchemasForNames(p.Definitions()...)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 of %s: %w", r.path, err)
	}
	doc := NewDocumentV3(KubernetesInfo(), p.V3(), schemas)
	doc.Components.SecuritySchemes = BearerTokenSchemes()
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode openapi v3 of %s: %w", r.path, err)
	}
	return b, nil
}

// PublishRoots publishes roots to p: a v3 document each and their paths
// in the v2 document, built from defs when first requested.
func PublishRoots(p Publisher, defs func() *Definitions, roots ...Root) {
	for _, r := range roots {
		p.SetV3Func(r.Key, func() ([]byte, error) { return r.documentV3(defs()) })
	}
	p.AddV2Source(func() (map[string]any, map[string]any, map[string]any, error) {
		paths, definitions, parameters := map[string]any{}, map[string]any{}, map[string]any{}
		for _, r := range roots {
			rp := r.paths()
			ds, err := defs().SchemasV2ForNames(rp.Definitions()...)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("openapi v2 of %s: %w", r.path, err)
			}
			ps, prs, err := rp.V2WithSharedParameters()
			if err != nil {
				return nil, nil, nil, fmt.Errorf("openapi v2 of %s: %w", r.path, err)
			}
			for k, v := range ps {
				paths[k] = v
			}
			for k, v := range ds {
				definitions[k] = v
			}
			for k, v := range prs {
				parameters[k] = v
			}
		}
		return paths, definitions, parameters, nil
	})
}
