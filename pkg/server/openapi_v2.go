package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// v2Entry is one path, definition or shared parameter of the v2 document
// with its encodings, each made at most once. Replacing a value makes a
// new entry, so the encoding of a document after a change (a CRD created,
// an aggregated server's document merged) redoes only the entries that
// changed: before, the whole document of several MiB was encoded, then
// parsed again (as YAML, by gnostic) for its protobuf form, on the first
// request after any change.
type v2Entry struct {
	value any
	// js is the value's JSON, set once under OpenAPI.mu.
	js []byte

	pbOnce sync.Once
	// pb is the entry's protobuf fields inside its parent message (Paths,
	// Definitions or ParameterDefinitions); vendor marks a path key that
	// gnostic reads as a vendor extension (Paths field 1, not 2).
	pb     []byte
	vendor bool
	pbErr  error
}

func newV2Entries(values map[string]any) map[string]*v2Entry {
	out := make(map[string]*v2Entry, len(values))
	setV2Entries(out, values)
	return out
}

func setV2Entries(dst map[string]*v2Entry, values map[string]any) {
	for k, v := range values {
		dst[k] = &v2Entry{value: v}
	}
}

// namedV2Entry is an entry of a document, under its name.
type namedV2Entry struct {
	name string
	*v2Entry
}

func sortedV2Entries(m map[string]*v2Entry) []namedV2Entry {
	out := make([]namedV2Entry, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, namedV2Entry{k, m[k]})
	}
	return out
}

// v2Contents is the content of one encoding of the v2 document.
type v2Contents struct {
	title, version             string
	bearerToken                bool
	paths, definitions, params []namedV2Entry
}

func newV2Contents(title, version string, bearerToken bool, paths, defs, params map[string]*v2Entry) *v2Contents {
	return &v2Contents{
		title: title, version: version, bearerToken: bearerToken,
		paths: sortedV2Entries(paths), definitions: sortedV2Entries(defs), params: sortedV2Entries(params),
	}
}

// The security of a server that authenticates bearer tokens, as
// kube-apiserver declares it (k8s.io/kubernetes v1.37.2
// pkg/kubeapiserver/authenticator/config.go; k8s.io/apiserver's
// completeOpenAPI requires the one scheme of every operation).
const (
	v2Security = `[{"BearerToken":[]}]`
	// Keys in the order of kube-openapi's spec.SecuritySchemeProps, as
	// kube-apiserver v1.37.2 writes them.
	v2SecurityDefinitions = `{"BearerToken":{"description":"Bearer Token authentication","type":"apiKey","name":"authorization","in":"header"}}`
)

// marshalV2 is json.Marshal without HTML escaping: kube-apiserver v1.37.2
// writes "<", ">" and "&" as they are in /openapi/v2 (kube-openapi
// encodes the document with go-json-experiment), escaped in /openapi/v3.
func marshalV2(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encodeJSON returns the document with its keys in the order
// kube-apiserver v1.37.2 writes them (kube-openapi's spec.Swagger fields):
// {"swagger", "info", "paths", "definitions"[, "parameters"][,
// "securityDefinitions", "security"]}, the entries of each sorted, HTML
// characters not escaped ([marshalV2]). Entries not encoded yet are encoded; the caller
// holds OpenAPI.mu.
func (c *v2Contents) encodeJSON() ([]byte, error) {
	info, err := marshalV2(struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	}{c.title, c.version})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"swagger":"2.0","info":`)
	b.Write(info)
	b.WriteString(`,"paths":`)
	if err := writeV2Object(&b, c.paths); err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	b.WriteString(`,"definitions":`)
	if err := writeV2Object(&b, c.definitions); err != nil {
		return nil, fmt.Errorf("definitions: %w", err)
	}
	if len(c.params) > 0 {
		b.WriteString(`,"parameters":`)
		if err := writeV2Object(&b, c.params); err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
	}
	if c.bearerToken {
		b.WriteString(`,"securityDefinitions":` + v2SecurityDefinitions + `,"security":` + v2Security)
	}
	b.WriteString(`}`)
	return b.Bytes(), nil
}

func writeV2Object(b *bytes.Buffer, entries []namedV2Entry) error {
	b.WriteByte('{')
	for i, e := range entries {
		if e.js == nil {
			js, err := marshalV2(e.value)
			if err != nil {
				return fmt.Errorf("%s: %w", e.name, err)
			}
			e.js = js
		}
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshalV2(e.name) // a string always encodes
		b.Write(k)
		b.WriteByte(':')
		b.Write(e.js)
	}
	b.WriteByte('}')
	return nil
}

// The top-level fields of gnostic's openapi_v2.Document that the
// document has.
const (
	v2FieldPaths       protowire.Number = 8
	v2FieldDefinitions protowire.Number = 9
	v2FieldParameters  protowire.Number = 10
)

// encodeProtobuf returns the document in gnostic's protobuf form, the
// bytes proto.Marshal gives for what openapi_v2.ParseDocument reads from
// the JSON encodeJSON made (which must have run): fields in number order,
// repeated entries in the JSON's (sorted) order, a Paths' vendor
// extensions before its paths. Each entry is parsed and marshalled once,
// outside OpenAPI.mu.
func (c *v2Contents) encodeProtobuf() ([]byte, error) {
	info, _ := json.Marshal(map[string]any{"title": c.title, "version": c.version})
	head, err := openapi_v2.ParseDocument([]byte(`{"info":` + string(info) + `,"paths":{},"swagger":"2.0"}`))
	if err != nil {
		return nil, err
	}
	head.Paths = nil // appended below, with the fields after it
	out, err := proto.Marshal(head)
	if err != nil {
		return nil, err
	}
	var vendor, paths []byte
	for _, e := range c.paths {
		pb, err := e.protobuf(v2FieldPaths, e.name)
		if err != nil {
			return nil, err
		}
		if e.vendor {
			vendor = append(vendor, pb...)
		} else {
			paths = append(paths, pb...)
		}
	}
	out = protowire.AppendTag(out, v2FieldPaths, protowire.BytesType)
	out = protowire.AppendVarint(out, uint64(len(vendor)+len(paths)))
	out = append(append(out, vendor...), paths...)
	for _, part := range []struct {
		field   protowire.Number
		entries []namedV2Entry
	}{{v2FieldDefinitions, c.definitions}, {v2FieldParameters, c.params}} {
		if part.field == v2FieldParameters && len(part.entries) == 0 {
			continue // absent from the JSON, as from the message
		}
		var body []byte
		for _, e := range part.entries {
			pb, err := e.protobuf(part.field, e.name)
			if err != nil {
				return nil, err
			}
			body = append(body, pb...)
		}
		out = protowire.AppendTag(out, part.field, protowire.BytesType)
		out = protowire.AppendBytes(out, body)
	}
	if c.bearerToken {
		// Fields 12 and 13, after the others.
		tail, err := openapi_v2.ParseDocument([]byte(`{"info":{"title":"t","version":"v"},"paths":{},"security":` +
			v2Security + `,"securityDefinitions":` + v2SecurityDefinitions + `,"swagger":"2.0"}`))
		if err != nil {
			return nil, err
		}
		sec, err := proto.Marshal(&openapi_v2.Document{Security: tail.Security, SecurityDefinitions: tail.SecurityDefinitions})
		if err != nil {
			return nil, err
		}
		out = append(out, sec...)
	}
	return out, nil
}

// protobuf returns the entry's fields inside the message of the document's
// field (Paths, Definitions or ParameterDefinitions), parsing a document
// that holds only this entry.
func (e *v2Entry) protobuf(field protowire.Number, name string) ([]byte, error) {
	e.pbOnce.Do(func() {
		k, _ := json.Marshal(name)
		var section string
		switch field {
		case v2FieldPaths:
			section = "paths"
		case v2FieldDefinitions:
			section = "definitions"
		default:
			section = "parameters"
		}
		doc := `{"info":{"title":"t","version":"v"},"` + section + `":{` + string(k) + `:` + string(e.js) + `}`
		if section != "paths" {
			doc += `,"paths":{}` // required
		}
		doc += `,"swagger":"2.0"}`
		d, err := openapi_v2.ParseDocument([]byte(doc))
		if err != nil {
			e.pbErr = fmt.Errorf("openapi v2 %s %s: %w", section, name, err)
			return
		}
		var msg proto.Message
		switch field {
		case v2FieldPaths:
			msg, e.vendor = d.Paths, len(d.Paths.GetVendorExtension()) > 0
		case v2FieldDefinitions:
			msg = d.Definitions
		default:
			msg = d.Parameters
		}
		e.pb, e.pbErr = proto.Marshal(msg)
	})
	return e.pb, e.pbErr
}

// protobufOfV2 parses a whole v2 document and returns its protobuf form.
func protobufOfV2(js []byte) ([]byte, error) {
	d, err := openapi_v2.ParseDocument(js)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(d)
}
