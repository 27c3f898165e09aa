package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ExtensionAction is the vendor extension naming an operation's action
// (get, list, watch, watchlist, post, put, patch, delete,
// deletecollection).
const ExtensionAction = "x-kubernetes-action"

// extensions returns the operation's vendor extensions; orderedGVK
// writes the group-version-kind's keys in operationGVK's order, not
// sorted.
func (op *operation) extensions(orderedGVK bool) spec.Extensions {
	if op.action == "" {
		return nil // discovery: no resource, no kind
	}
	// On an operation the extension is one object, not a list.
	var gvk any = map[string]any{"group": op.gvk.Group, "version": op.gvk.Version, "kind": op.gvk.Kind}
	if orderedGVK {
		gvk = operationGVK{Group: op.gvk.Group, Version: op.gvk.Version, Kind: op.gvk.Kind}
	}
	return spec.Extensions{ExtensionAction: op.action, ExtensionGVK: gvk}
}

// V2 renders the operations as Swagger 2.0 paths, references pointing at
// #/definitions/, every parameter inline; kube-apiserver serves them at
// /openapi/v2 with most parameters shared ([Paths.V2WithSharedParameters]).
func (p *Paths) V2() map[string]*spec.PathItem {
	out := make(map[string]*spec.PathItem, len(p.items))
	for path, item := range p.items {
		pi := &spec.PathItem{}
		for _, prm := range item.params {
			pi.Parameters = append(pi.Parameters, prm.v2())
		}
		for method, op := range item.ops {
			o := op.v2(p.orderedGVKInV2)
			switch method {
			case "get":
				pi.Get = o
			case "put":
				pi.Put = o
			case "post":
				pi.Post = o
			case "patch":
				pi.Patch = o
			case "delete":
				pi.Delete = o
			case "head":
				pi.Head = o
			case "options":
				pi.Options = o
			}
		}
		out[path] = pi
	}
	return out
}

func (prm param) v2() spec.Parameter {
	return spec.Parameter{
		ParamProps:        spec.ParamProps{Name: prm.name, In: prm.in, Description: prm.description, Required: prm.required},
		SimpleSchema:      spec.SimpleSchema{Type: prm.typ},
		CommonValidations: spec.CommonValidations{UniqueItems: true},
	}
}

func (op *operation) v2(orderedGVK bool) *spec.Operation {
	o := &spec.Operation{
		VendorExtensible: spec.VendorExtensible{Extensions: op.extensions(orderedGVK)},
		OperationProps: spec.OperationProps{
			Description: op.description,
			Consumes:    op.consumes,
			Produces:    op.produces,
			Schemes:     []string{"https"},
			Tags:        []string{op.tag},
			ID:          op.id,
			Responses: &spec.Responses{ResponsesProps: spec.ResponsesProps{
				StatusCodeResponses: make(map[int]spec.Response, len(op.responses)),
			}},
		},
	}
	params := make([]spec.Parameter, 0, len(op.params)+1)
	if op.body != "" {
		params = append(params, spec.Parameter{ParamProps: spec.ParamProps{
			Name: "body", In: "body", Required: op.bodyRequired, Schema: spec.RefSchema(refPrefixV2 + op.body),
		}})
	}
	for _, prm := range op.params {
		params = append(params, prm.v2())
	}
	o.Parameters = params
	for _, r := range op.responses {
		resp := spec.Response{ResponseProps: spec.ResponseProps{Description: r.description}}
		if r.definition != "" {
			resp.Schema = spec.RefSchema(refPrefixV2 + r.definition)
		} else if r.typ != "" {
			resp.Schema = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{r.typ}}}
		}
		o.Responses.StatusCodeResponses[r.code] = resp
	}
	return o
}

// V3 renders the operations as OpenAPI v3 paths, shaped as kube-apiserver
// serves them under /openapi/v3, references pointing at
// #/components/schemas/.
func (p *Paths) V3() map[string]*spec3.Path {
	out := make(map[string]*spec3.Path, len(p.items))
	for path, item := range p.items {
		pi := &spec3.Path{}
		for _, prm := range item.params {
			pi.Parameters = append(pi.Parameters, prm.v3())
		}
		for method, op := range item.ops {
			o := op.v3()
			switch method {
			case "get":
				pi.Get = o
			case "put":
				pi.Put = o
			case "post":
				pi.Post = o
			case "patch":
				pi.Patch = o
			case "delete":
				pi.Delete = o
			case "head":
				pi.Head = o
			case "options":
				pi.Options = o
			}
		}
		out[path] = pi
	}
	return out
}

func (prm param) v3() *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: prm.name, In: prm.in, Description: prm.description, Required: prm.required,
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{prm.typ}, UniqueItems: true}},
	}}
}

func content(mediaTypes []string, definition string) map[string]*spec3.MediaType {
	return contentOf(mediaTypes, func() *spec.Schema { return spec.RefSchema(refPrefixV3 + definition) })
}

func contentOf(mediaTypes []string, schema func() *spec.Schema) map[string]*spec3.MediaType {
	out := make(map[string]*spec3.MediaType, len(mediaTypes))
	for _, mt := range mediaTypes {
		out[mt] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: schema()}}
	}
	return out
}

// operationGVK is an operation's group-version-kind extension in the v3
// documents, where kube-apiserver v1.37.2 writes its keys in this order
// (group, version, kind); in v2 they are sorted, as a map's.
type operationGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func (op *operation) v3() *spec3.Operation {
	o := &spec3.Operation{
		VendorExtensible: spec.VendorExtensible{Extensions: op.extensions(true)},
		OperationProps: spec3.OperationProps{
			Description: op.description,
			OperationId: op.id,
			Tags:        []string{op.tag},
			Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{
				StatusCodeResponses: make(map[int]*spec3.Response, len(op.responses)),
			}},
		},
	}
	for _, prm := range op.params {
		o.Parameters = append(o.Parameters, prm.v3())
	}
	if op.body != "" {
		o.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{
			Content: content(op.consumes, op.body), Required: op.bodyRequired,
		}}
	}
	for _, r := range op.responses {
		resp := &spec3.Response{ResponseProps: spec3.ResponseProps{Description: r.description}}
		if r.definition != "" {
			resp.Content = content(op.produces, r.definition)
		} else if r.typ != "" {
			resp.Content = contentOf(op.produces, func() *spec.Schema {
				return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{r.typ}}}
			})
		}
		o.Responses.StatusCodeResponses[r.code] = resp
	}
	return o
}
