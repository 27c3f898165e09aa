package openapi

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Default returns the process-wide Definitions of kapi's API types,
// built on first use. Definitions are immutable, so every server of the
// process shares these (and the schema tables they build lazily) rather
// than building their own.
var Default = sync.OnceValue(NewDefinitions)

// Publisher is where documents go: a *server.OpenAPI. Both methods take
// functions called later, when a client first asks for the documents,
// so that publishing costs a server's start nothing.
type Publisher interface {
	// SetV3Func sets the v3 document of a group-version path ("api/v1",
	// "apis/apps/v1") to what build returns; nil removes it.
	SetV3Func(gvPath string, build func() ([]byte, error))
	// AddV2Source adds paths, definitions and the shared parameters
	// the paths reference to the v2 document.
	AddV2Source(src func() (paths, definitions, parameters map[string]any, err error))
}

// DocumentPath is the path of a group-version's v3 document under
// /openapi/v3: "api/v1", "apis/apps/v1".
func DocumentPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// GroupVersionResources is one group-version and what it serves.
type GroupVersionResources struct {
	GroupVersion schema.GroupVersion
	Resources    []Resource
}

// PublishGroupVersions publishes group-versions of built-in resources
// (Installer rules) to p: a v3 document per group-version, titled by
// info, and their operations and schemas in the v2 document, all built
// from defs when first requested.
func PublishGroupVersions(p Publisher, defs func() *Definitions, info *spec.Info, groups []GroupVersionResources) {
	for _, g := range groups {
		p.SetV3Func(DocumentPath(g.GroupVersion), func() ([]byte, error) {
			doc, err := defs().DocumentV3(info, g.GroupVersion, g.Resources)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(doc)
			if err != nil {
				return nil, fmt.Errorf("encode openapi v3 of %s: %w", g.GroupVersion, err)
			}
			return b, nil
		})
	}
	p.AddV2Source(func() (map[string]any, map[string]any, map[string]any, error) {
		paths, definitions, parameters := map[string]any{}, map[string]any{}, map[string]any{}
		for _, g := range groups {
			ps, ds, prs, err := defs().PartV2(g.GroupVersion, g.Resources)
			if err != nil {
				return nil, nil, nil, err
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
