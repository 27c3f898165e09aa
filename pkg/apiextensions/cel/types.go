package cel

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/schema"
)

// Size constants of upstream's CEL size estimation: the largest request,
// and the smallest JSON forms of values.
const (
	maxRequestSize      = int64(3 * 1024 * 1024)
	maxDurationSizeJSON = 32
	maxDatetimeSizeJSON = 32
	minDurationSizeJSON = 3
	jsonDateSize        = 12
	minDatetimeSizeJSON = 21
	minStringSize       = 2
	minBoolSize         = 4
	minNumberSize       = 1
)

// declType is the CEL type of one schema node, as upstream derives it
// from the structural schema: objects with properties become struct
// types with one field per (escaped) property name, additionalProperties
// maps, arrays lists, strings (by format) string, bytes, duration or
// timestamp, x-kubernetes-int-or-string dyn.
type declType struct {
	typ    *types.Type
	kind   declKind
	format string // strings only: "byte", "duration", "date", "date-time" or ""
	// fields of an object, by escaped name.
	fields map[string]*declField
	// elem is the item (list) or value (map) type.
	elem *declType
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

type declKind int

const (
	kindScalar declKind = iota
	kindDyn
	kindObject
	kindList
	kindMap
	kindInt
	kindDouble
)

// declField is a declared property of an object type.
type declField struct {
	name string // the property's name in the schema
	decl *declType
}

// typeProvider is the types.Provider of one validator's object types; other
// types are the base provider's.
type typeProvider struct {
	base    types.Provider
	objects map[string]*declType
	next    int
}

// schemaDecl converts s to its CEL type, or nil when s is not exposed to
// rules (no type and not int-or-string, arrays of such items, ...).
// resourceRoot adds apiVersion, kind and metadata (name, generateName),
// as at the root of a custom resource or an embedded resource. Object
// types are named below name and registered in t.
func (t *typeProvider) schemaDecl(s *apiextensionsv1.JSONSchemaProps, resourceRoot bool, name string) *declType {
	if s == nil {
		return nil
	}
	if s.XIntOrString {
		d := &declType{typ: types.DynType, kind: kindDyn, minSize: 1}
		if s.MaxLength != nil {
			d.maxElements = zeroIfNegative(*s.MaxLength) * 4
		} else {
			d.maxElements = maxRequestSize - 2
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
		d := &declType{typ: types.NewListType(item.typ), kind: kindList, elem: item, minSize: 2}
		if s.XListType != nil && (*s.XListType == "set" || (*s.XListType == "map" && len(s.XListMapKeys) > 0)) {
			d.listType = *s.XListType
			for _, k := range s.XListMapKeys {
				if esc, ok := escape(k); ok {
					d.mapKeys = append(d.mapKeys, esc)
				}
			}
		}
		if s.MaxItems != nil {
			d.maxElements = zeroIfNegative(*s.MaxItems)
		} else {
			d.maxElements = (maxRequestSize - 2) / (item.minSize + 1)
		}
		return d
	case "object":
		if ap := schema.AdditionalProperties(s); ap != nil {
			val := t.schemaDecl(ap, ap.XEmbeddedResource, name+".@elem")
			if val == nil {
				return nil
			}
			d := &declType{typ: types.NewMapType(types.StringType, val.typ), kind: kindMap, elem: val, minSize: 2}
			if s.MaxProperties != nil {
				d.maxElements = zeroIfNegative(*s.MaxProperties)
			} else {
				d.maxElements = (maxRequestSize - 2) / (val.minSize + 6)
			}
			return d
		}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		d := &declType{kind: kindObject, fields: map[string]*declField{}, minSize: 2}
		for prop, ps := range s.Properties {
			esc, ok := escape(prop)
			fd := t.schemaDecl(&ps, ps.XEmbeddedResource, name+"."+esc)
			if fd == nil {
				continue
			}
			if ok {
				d.fields[esc] = &declField{name: prop, decl: fd}
			}
			if required[prop] && ps.Default == nil {
				d.minSize += int64(len(prop)) + fd.minSize + 4
			}
		}
		d.typ = types.NewObjectType(name)
		t.objects[name] = d
		return d
	case "string":
		d := &declType{typ: types.StringType, kind: kindScalar, format: s.Format, minSize: minStringSize}
		switch s.Format {
		case "byte":
			d.typ = types.BytesType
			if s.MaxLength != nil {
				d.maxElements = zeroIfNegative(*s.MaxLength)
			} else {
				d.maxElements = maxRequestSize - 2
			}
			return d
		case "duration":
			d.typ, d.minSize, d.maxElements = types.DurationType, minDurationSizeJSON, maxDurationSizeJSON
			return d
		case "date":
			d.typ, d.minSize, d.maxElements = types.TimestampType, jsonDateSize, jsonDateSize
			return d
		case "date-time":
			d.typ, d.minSize, d.maxElements = types.TimestampType, minDatetimeSizeJSON, maxDatetimeSizeJSON
			return d
		}
		d.format = ""
		switch {
		case s.MaxLength != nil:
			d.maxElements = zeroIfNegative(*s.MaxLength) * 4
		case len(s.Enum) > 0:
			d.maxElements = maxEnumLength(s.Enum)
		default:
			d.maxElements = maxRequestSize - 2
		}
		return d
	case "boolean":
		return &declType{typ: types.BoolType, kind: kindScalar, minSize: minBoolSize}
	case "number":
		return &declType{typ: types.DoubleType, kind: kindDouble, minSize: minNumberSize}
	case "integer":
		return &declType{typ: types.IntType, kind: kindInt, minSize: minNumberSize}
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
func (t *typeProvider) EnumValue(name string) ref.Val { return t.base.EnumValue(name) }

// FindIdent implements types.Provider.
func (t *typeProvider) FindIdent(name string) (ref.Val, bool) { return t.base.FindIdent(name) }

// FindStructType implements types.Provider.
func (t *typeProvider) FindStructType(name string) (*types.Type, bool) {
	if d, ok := t.objects[name]; ok {
		return types.NewTypeTypeWithParam(d.typ), true
	}
	return t.base.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (t *typeProvider) FindStructFieldNames(name string) ([]string, bool) {
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
func (t *typeProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
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
func (t *typeProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := t.objects[name]; ok {
		return types.NewErr("cannot construct values of type %s", name)
	}
	return t.base.NewValue(name, fields)
}

// newSelfTypeName is the name of a validator's root type: unique per
// compilation, so that rules cannot depend on it (as upstream).
func (t *typeProvider) newSelfTypeName() string {
	t.next++
	return fmt.Sprintf("selfType%d", t.next)
}

// reservedWords are the identifiers CEL reserves; properties named so are
// escaped to __name__.
var reservedWords = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}

// escape turns a property name into the CEL identifier rules use, as
// upstream: "__" -> "__underscores__", "." -> "__dot__", "-" ->
// "__dash__", "/" -> "__slash__", reserved words -> "__word__". Names
// with other characters, or starting with a digit, cannot be accessed.
func escape(name string) (string, bool) {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return "", false
	}
	if reservedWords[name] {
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
