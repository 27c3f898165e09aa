package apiextensions

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Size constants of upstream's CEL size estimation: the largest request,
// and the smallest JSON forms of values.
const (
	celMaxRequestSize      = int64(3 * 1024 * 1024)
	celMaxDurationSizeJSON = 32
	celMaxDatetimeSizeJSON = 32
	celMinDurationSizeJSON = 3
	celJSONDateSize        = 12
	celMinDatetimeSizeJSON = 21
	celMinStringSize       = 2
	celMinBoolSize         = 4
	celMinNumberSize       = 1
)

// celDecl is the CEL type of one schema node, as upstream derives it
// from the structural schema: objects with properties become struct
// types with one field per (escaped) property name, additionalProperties
// maps, arrays lists, strings (by format) string, bytes, duration or
// timestamp, x-kubernetes-int-or-string dyn.
type celDecl struct {
	typ    *types.Type
	kind   celDeclKind
	format string // strings only: "byte", "duration", "date", "date-time" or ""
	// fields of an object, by escaped name.
	fields map[string]*celField
	// elem is the item (list) or value (map) type.
	elem *celDecl
	// maxElements is the size bound of the cost estimation: string
	// length, list items, map entries.
	maxElements int64
	// minSize is the smallest JSON form of a value of this type.
	minSize int64
	// listType and mapKeys: x-kubernetes-list-type set and map lists
	// compare equal regardless of order, as upstream.
	listType string
	mapKeys  []string
}

type celDeclKind int

const (
	celKindScalar celDeclKind = iota
	celKindDyn
	celKindObject
	celKindList
	celKindMap
	celKindInt
	celKindDouble
)

// celField is a declared property of an object type.
type celField struct {
	name string // the property's name in the schema
	decl *celDecl
}

// celTypes is the types.Provider of one validator's object types; other
// types are the base provider's.
type celTypes struct {
	base    types.Provider
	objects map[string]*celDecl
	next    int
}

// schemaDecl converts s to its CEL type, or nil when s is not exposed to
// rules (no type and not int-or-string, arrays of such items, ...).
// resourceRoot adds apiVersion, kind and metadata (name, generateName),
// as at the root of a custom resource or an embedded resource. Object
// types are named below name and registered in t.
func (t *celTypes) schemaDecl(s *apiextensionsv1.JSONSchemaProps, resourceRoot bool, name string) *celDecl {
	if s == nil {
		return nil
	}
	if s.XIntOrString {
		d := &celDecl{typ: types.DynType, kind: celKindDyn, minSize: 1}
		if s.MaxLength != nil {
			d.maxElements = zeroIfNegative(*s.MaxLength) * 4
		} else {
			d.maxElements = celMaxRequestSize - 2
		}
		return d
	}
	if resourceRoot {
		s = withTypeAndObjectMeta(s)
	}
	switch s.Type {
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return nil
		}
		item := t.schemaDecl(s.Items.Schema, s.Items.Schema.XEmbeddedResource, name+".@idx")
		if item == nil {
			return nil
		}
		d := &celDecl{typ: types.NewListType(item.typ), kind: celKindList, elem: item, minSize: 2}
		if s.XListType != nil && (*s.XListType == "set" || (*s.XListType == "map" && len(s.XListMapKeys) > 0)) {
			d.listType = *s.XListType
			for _, k := range s.XListMapKeys {
				if esc, ok := celEscape(k); ok {
					d.mapKeys = append(d.mapKeys, esc)
				}
			}
		}
		if s.MaxItems != nil {
			d.maxElements = zeroIfNegative(*s.MaxItems)
		} else {
			d.maxElements = (celMaxRequestSize - 2) / (item.minSize + 1)
		}
		return d
	case "object":
		if ap := additionalSchema(s); ap != nil {
			val := t.schemaDecl(ap, ap.XEmbeddedResource, name+".@elem")
			if val == nil {
				return nil
			}
			d := &celDecl{typ: types.NewMapType(types.StringType, val.typ), kind: celKindMap, elem: val, minSize: 2}
			if s.MaxProperties != nil {
				d.maxElements = zeroIfNegative(*s.MaxProperties)
			} else {
				d.maxElements = (celMaxRequestSize - 2) / (val.minSize + 6)
			}
			return d
		}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		d := &celDecl{kind: celKindObject, fields: map[string]*celField{}, minSize: 2}
		for prop, ps := range s.Properties {
			esc, ok := celEscape(prop)
			fd := t.schemaDecl(&ps, ps.XEmbeddedResource, name+"."+esc)
			if fd == nil {
				continue
			}
			if ok {
				d.fields[esc] = &celField{name: prop, decl: fd}
			}
			if required[prop] && ps.Default == nil {
				d.minSize += int64(len(prop)) + fd.minSize + 4
			}
		}
		d.typ = types.NewObjectType(name)
		t.objects[name] = d
		return d
	case "string":
		d := &celDecl{typ: types.StringType, kind: celKindScalar, format: s.Format, minSize: celMinStringSize}
		switch s.Format {
		case "byte":
			d.typ = types.BytesType
			if s.MaxLength != nil {
				d.maxElements = zeroIfNegative(*s.MaxLength)
			} else {
				d.maxElements = celMaxRequestSize - 2
			}
			return d
		case "duration":
			d.typ, d.minSize, d.maxElements = types.DurationType, celMinDurationSizeJSON, celMaxDurationSizeJSON
			return d
		case "date":
			d.typ, d.minSize, d.maxElements = types.TimestampType, celJSONDateSize, celJSONDateSize
			return d
		case "date-time":
			d.typ, d.minSize, d.maxElements = types.TimestampType, celMinDatetimeSizeJSON, celMaxDatetimeSizeJSON
			return d
		}
		d.format = ""
		switch {
		case s.MaxLength != nil:
			d.maxElements = zeroIfNegative(*s.MaxLength) * 4
		case len(s.Enum) > 0:
			d.maxElements = maxEnumLength(s.Enum)
		default:
			d.maxElements = celMaxRequestSize - 2
		}
		return d
	case "boolean":
		return &celDecl{typ: types.BoolType, kind: celKindScalar, minSize: celMinBoolSize}
	case "number":
		return &celDecl{typ: types.DoubleType, kind: celKindDouble, minSize: celMinNumberSize}
	case "integer":
		return &celDecl{typ: types.IntType, kind: celKindInt, minSize: celMinNumberSize}
	}
	return nil
}

// maxEnumLength is the length of the longest string of an enum.
func maxEnumLength(enum []apiextensionsv1.JSON) int64 {
	var out int64
	for _, e := range enum {
		// A JSON string's raw form has two quotes.
		if n := int64(len(e.Raw)) - 2; len(e.Raw) > 0 && e.Raw[0] == '"' && n > out {
			out = n
		}
	}
	return out
}

func zeroIfNegative(v int64) int64 {
	if v < 0 {
		return 0
	}
	return v
}

// withTypeAndObjectMeta returns s with apiVersion, kind and metadata
// (name and generateName) declared, as upstream does at resource roots.
func withTypeAndObjectMeta(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	md, hasMD := s.Properties["metadata"]
	if s.Properties["kind"].Type == "string" && s.Properties["apiVersion"].Type == "string" && hasMD && md.Type == "object" &&
		md.Properties["name"].Type == "string" && md.Properties["generateName"].Type == "string" {
		return s
	}
	out := *s
	out.Properties = make(map[string]apiextensionsv1.JSONSchemaProps, len(s.Properties)+3)
	for k, v := range s.Properties {
		out.Properties[k] = v
	}
	out.Properties["kind"] = str
	out.Properties["apiVersion"] = str
	out.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"name": str, "generateName": str,
	}}
	return &out
}

// EnumValue implements types.Provider.
func (t *celTypes) EnumValue(name string) ref.Val { return t.base.EnumValue(name) }

// FindIdent implements types.Provider.
func (t *celTypes) FindIdent(name string) (ref.Val, bool) { return t.base.FindIdent(name) }

// FindStructType implements types.Provider.
func (t *celTypes) FindStructType(name string) (*types.Type, bool) {
	if d, ok := t.objects[name]; ok {
		return types.NewTypeTypeWithParam(d.typ), true
	}
	return t.base.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (t *celTypes) FindStructFieldNames(name string) ([]string, bool) {
	d, ok := t.objects[name]
	if !ok {
		return t.base.FindStructFieldNames(name)
	}
	out := make([]string, 0, len(d.fields))
	for f := range d.fields {
		out = append(out, f)
	}
	return out, true
}

// FindStructFieldType implements types.Provider. Fields have no getter:
// values are maps at run time, read by key.
func (t *celTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	d, ok := t.objects[name]
	if !ok {
		return t.base.FindStructFieldType(name, field)
	}
	f, ok := d.fields[field]
	if !ok {
		return nil, false
	}
	return &types.FieldType{Type: f.decl.typ}, true
}

// NewValue implements types.Provider: object types of a schema cannot be
// constructed in rules.
func (t *celTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := t.objects[name]; ok {
		return types.NewErr("cannot construct values of type %s", name)
	}
	return t.base.NewValue(name, fields)
}

// newSelfTypeName is the name of a validator's root type: unique per
// compilation, so that rules cannot depend on it (as upstream).
func (t *celTypes) newSelfTypeName() string {
	t.next++
	return fmt.Sprintf("selfType%d", t.next)
}

// celReserved are the identifiers CEL reserves; properties named so are
// escaped to __name__.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}

// celEscape turns a property name into the CEL identifier rules use, as
// upstream: "__" -> "__underscores__", "." -> "__dot__", "-" ->
// "__dash__", "/" -> "__slash__", reserved words -> "__word__". Names
// with other characters, or starting with a digit, cannot be accessed.
func celEscape(name string) (string, bool) {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return "", false
	}
	if celReserved[name] {
		return "__" + name + "__", true
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' && i+1 < len(name) && name[i+1] == '_':
			b.WriteString("__underscores__")
			i++
		case c == '.':
			b.WriteString("__dot__")
		case c == '-':
			b.WriteString("__dash__")
		case c == '/':
			b.WriteString("__slash__")
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), true
}
