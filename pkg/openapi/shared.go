package openapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// refPrefixV2Parameters is where a v2 document's shared parameters are.
const refPrefixV2Parameters = "#/parameters/"

// V2WithSharedParameters renders the operations as Swagger 2.0 paths the
// way kube-apiserver serves them at /openapi/v2: every parameter that is
// not specific to its endpoint is replaced by a reference to a shared
// parameter of the document ("#/parameters/pretty-tJGM1-ng"), returned
// with the paths. This is kube-openapi's deduplicateParameters
// (k8s.io/kube-openapi pkg/builder/parameters.go, as k8s.io/apiserver
// v0.37.2 and apiextensions-apiserver's builder run it): a parameter is
// shared under its name, "-" and the first 6 bytes of the 64-bit FNV-1
// hash of its JSON encoding in URL base64, unless it is a "name"
// parameter, the "dryRun" or "fieldValidation" query parameter (which
// kubectl looks for inline) or a body whose schema is not one of
// apimachinery's. The name depends only on the parameter, so every path
// (and group-version, and server of the chain) is shared alone and the
// union is upstream's document; upstream would name a second parameter
// whose name and hash both collide with another "<name>-1", a 48-bit
// collision kapi does not expect and does not reproduce.
func (p *Paths) V2WithSharedParameters() (map[string]*spec.PathItem, map[string]spec.Parameter, error) {
	paths := p.V2()
	shared := map[string]spec.Parameter{}
	share := func(ps []spec.Parameter) error {
		for i, prm := range ps {
			if !shareable(&prm) {
				continue
			}
			name, err := SharedParameterName(prm)
			if err != nil {
				return err
			}
			shared[name] = prm
			ps[i] = spec.Parameter{Refable: spec.Refable{Ref: spec.MustCreateRef(refPrefixV2Parameters + name)}}
		}
		return nil
	}
	for path, item := range paths {
		if err := share(item.Parameters); err != nil {
			return nil, nil, fmt.Errorf("openapi v2 %s: %w", path, err)
		}
		for _, op := range []*spec.Operation{item.Get, item.Put, item.Post, item.Delete, item.Options, item.Head, item.Patch} {
			if op == nil {
				continue
			}
			if err := share(op.Parameters); err != nil {
				return nil, nil, fmt.Errorf("openapi v2 %s %s: %w", path, op.ID, err)
			}
		}
	}
	return paths, shared, nil
}

// shareable says whether kube-openapi shares prm (collectSharedParameters).
func shareable(prm *spec.Parameter) bool {
	switch {
	case prm.Ref.String() != "":
		return false
	case (prm.In == "query" || prm.In == "path") && prm.Name == "name":
		return false
	case prm.In == "query" && (prm.Name == "fieldValidation" || prm.Name == "dryRun"):
		return false
	case prm.Schema != nil && prm.In == "body" && prm.Name == "body" &&
		!strings.HasPrefix(prm.Schema.Ref.String(), "#/definitions/io.k8s.apimachinery"):
		return false
	}
	return true
}

// SharedParameterName is the name kube-openapi shares a v2 parameter
// under: its name, "-" and 8 characters of the hash of its JSON.
func SharedParameterName(prm spec.Parameter) (string, error) {
	b, err := json.Marshal(prm)
	if err != nil {
		return "", fmt.Errorf("encode parameter %s: %w", prm.Name, err)
	}
	name := prm.Name
	if name == "" {
		name = "param"
	}
	h := fnv.New64()
	h.Write(b)
	return name + "-" + base64.URLEncoding.EncodeToString(h.Sum(make([]byte, 0, 8))[:6]), nil
}
