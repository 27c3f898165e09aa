package apiextensions

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

// celFormatType is the CEL type of a named format, named as upstream.
var celFormatType = cel.ObjectType("kubernetes.NamedFormat")

// celMaxFormatRegexSize is the largest regexSize of the named formats:
// the static cost of validate assumes it.
const celMaxFormatRegexSize = 1000

// celFormat is a named string format as a CEL value: validate returns
// the reasons a string does not match it; maxRegexSize is the size of
// the regular expression it is (about) equivalent to, for the cost.
type celFormat struct {
	name         string
	validate     func(string) []string
	maxRegexSize int
}

// ConvertToNative implements ref.Val.
func (v celFormat) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'NamedFormat' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v celFormat) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case celFormatType:
		return v
	case types.TypeType:
		return celFormatType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", celFormatType, t)
}

// Equal implements ref.Val.
func (v celFormat) Equal(other ref.Val) ref.Val {
	o, ok := other.(celFormat)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.name == o.name)
}

// Type implements ref.Val.
func (celFormat) Type() ref.Type { return celFormatType }

// Value implements ref.Val.
func (v celFormat) Value() any { return v }

// celStrfmt is a format of kube-openapi's registry, failing with msg.
func celStrfmt(name, msg string) func(string) []string {
	return func(s string) []string {
		if !strfmt.Default.Validates(name, s) {
			return []string{msg}
		}
		return nil
	}
}

// celNamedFormats are upstream's named formats, by the name format.named
// takes (and of the format.<name>() functions).
func celNamedFormats() map[string]celFormat {
	return map[string]celFormat{
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
		}, celMaxFormatRegexSize},
		"uuid":     {"uuid", celStrfmt("uuid", "does not match the UUID format"), len(strfmt.UUIDPattern)},
		"byte":     {"byte", celStrfmt("byte", "invalid base64"), 83},
		"date":     {"date", celStrfmt("date", "invalid date"), len(strfmt.DateTimePattern)},
		"datetime": {"datetime", celStrfmt("datetime", "invalid datetime"), len(strfmt.DateTimePattern)},
	}
}

// celFormatLibrary is upstream's format library: format.named(name)
// (optional), format.<name>() and <format>.validate(s), none when s
// matches, else the reasons it does not.
func celFormatLibrary() cel.EnvOption {
	return cel.Lib(celFormatLib{formats: celNamedFormats()})
}

type celFormatLib struct {
	formats map[string]celFormat
}

func (celFormatLib) LibraryName() string { return "format" }

func (celFormatLib) ProgramOptions() []cel.ProgramOption { return nil }

func (l celFormatLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{celFormatType, cel.StringType},
			cel.OptionalType(cel.ListType(cel.StringType)), cel.BinaryBinding(celFormatValidate))),
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(celFormatType),
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
		opts = append(opts, cel.Function(fn, cel.Overload(fn, nil, celFormatType, cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	return opts
}

func celFormatValidate(fv, sv ref.Val) ref.Val {
	f, ok := fv.(celFormat)
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
