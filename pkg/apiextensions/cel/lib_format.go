package cel

import (
	"fmt"
	"net/url"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// formatType is the CEL type of a named format, named as upstream.
var formatType = cel.ObjectType("kubernetes.NamedFormat")

// maxFormatRegexSize is the largest regexSize of the named formats:
// the static cost of validate assumes it.
const maxFormatRegexSize = 1000

// namedFormat is a named string format as a CEL value: validate returns
// the reasons a string does not match it; maxRegexSize is the size of
// the regular expression it is (about) equivalent to, for the cost.
type namedFormat struct {
	name         string
	validate     func(string) []string
	maxRegexSize int
}

// ConvertToNative implements ref.Val.
func (v namedFormat) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'NamedFormat' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v namedFormat) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case formatType:
		return v
	case types.TypeType:
		return formatType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", formatType, t)
}

// Equal implements ref.Val.
func (v namedFormat) Equal(other ref.Val) ref.Val {
	o, ok := other.(namedFormat)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.name == o.name)
}

// Type implements ref.Val.
func (namedFormat) Type() ref.Type { return formatType }

// Value implements ref.Val.
func (v namedFormat) Value() any { return v }

// strfmtCheck is a format of kube-openapi's registry, failing with msg.
func strfmtCheck(name, msg string) func(string) []string {
	return func(s string) []string {
		if !strfmt.Default.Validates(name, s) {
			return []string{msg}
		}
		return nil
	}
}

// namedFormats are upstream's named formats, by the name format.named
// takes (and of the format.<name>() functions).
func namedFormats() map[string]namedFormat {
	return map[string]namedFormat{
		"dns1123Label":           {"DNS1123Label", func(s string) []string { return apimachineryvalidation.NameIsDNSLabel(s, false) }, 30},
		"dns1123Subdomain":       {"DNS1123Subdomain", func(s string) []string { return apimachineryvalidation.NameIsDNSSubdomain(s, false) }, 60},
		"dns1035Label":           {"DNS1035Label", func(s string) []string { return apimachineryvalidation.NameIsDNS1035Label(s, false) }, 30},
		"qualifiedName":          {"QualifiedName", validation.IsQualifiedName, 60},
		"dns1123LabelPrefix":     {"DNS1123LabelPrefix", func(s string) []string { return apimachineryvalidation.NameIsDNSLabel(s, true) }, 30},
		"dns1123SubdomainPrefix": {"DNS1123SubdomainPrefix", func(s string) []string { return apimachineryvalidation.NameIsDNSSubdomain(s, true) }, 60},
		"dns1035LabelPrefix":     {"DNS1035LabelPrefix", func(s string) []string { return apimachineryvalidation.NameIsDNS1035Label(s, true) }, 30},
		"labelValue":             {"LabelValue", validation.IsValidLabelValue, 40},
		"uri": {"URI", func(s string) []string {
			if _, err := url.ParseRequestURI(s); err != nil {
				return []string{err.Error()}
			}
			return nil
		}, maxFormatRegexSize},
		"uuid":     {"uuid", strfmtCheck("uuid", "does not match the UUID format"), len(strfmt.UUIDPattern)},
		"byte":     {"byte", strfmtCheck("byte", "invalid base64"), 83},
		"date":     {"date", strfmtCheck("date", "invalid date"), len(strfmt.DateTimePattern)},
		"datetime": {"datetime", strfmtCheck("datetime", "invalid datetime"), len(strfmt.DateTimePattern)},
	}
}

// formatLibrary is upstream's format library: format.named(name)
// (optional), format.<name>() and <format>.validate(s), none when s
// matches, else the reasons it does not.
func formatLibrary() cel.EnvOption {
	return cel.Lib(formatLib{formats: namedFormats()})
}

type formatLib struct {
	formats map[string]namedFormat
}

func (formatLib) LibraryName() string { return "format" }

func (formatLib) ProgramOptions() []cel.ProgramOption { return nil }

func (l formatLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{formatType, cel.StringType},
			cel.OptionalType(cel.ListType(cel.StringType)), cel.BinaryBinding(formatValidate))),
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(formatType),
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				s, ok := v.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				f, ok := l.formats[string(s)]
				if !ok {
					return types.OptionalNone
				}
				return types.OptionalOf(f)
			}))),
	}
	for name, f := range l.formats {
		fn := "format." + name
		opts = append(opts, cel.Function(fn, cel.Overload(fn, nil, formatType, cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	return opts
}

func formatValidate(fv, sv ref.Val) ref.Val {
	f, ok := fv.(namedFormat)
	if !ok {
		return types.MaybeNoSuchOverloadErr(fv)
	}
	s, ok := sv.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(sv)
	}
	errs := f.validate(string(s))
	if len(errs) == 0 {
		return types.OptionalNone
	}
	return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, errs))
}
