package apiextensions

import (
	"fmt"
	"net/url"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// celURLType is the CEL type of a URL, named as upstream.
var celURLType = cel.ObjectType("kubernetes.URL")

// celURL is a URL as a CEL value.
type celURL struct {
	u *url.URL
}

// ConvertToNative implements ref.Val.
func (v celURL) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.u).AssignableTo(t) {
		return v.u, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.u.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'URL' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v celURL) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case celURLType:
		return v
	case types.TypeType:
		return celURLType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", celURLType, t)
}

// Equal implements ref.Val.
func (v celURL) Equal(other ref.Val) ref.Val {
	o, ok := other.(celURL)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.u.String() == o.u.String())
}

// Type implements ref.Val.
func (celURL) Type() ref.Type { return celURLType }

// Value implements ref.Val.
func (v celURL) Value() any { return v.u }

// celURLLibrary is upstream's url library: url and isURL accept the
// absolute URLs and absolute paths of url.ParseRequestURI (as the
// OpenAPI "uri" format); getScheme, getHost, getHostname, getPort,
// getEscapedPath and getQuery read them.
func celURLLibrary() cel.EnvOption {
	return cel.Lib(celURLLib{})
}

type celURLLib struct{}

func (celURLLib) LibraryName() string { return "kubernetes.urls" }

func (celURLLib) ProgramOptions() []cel.ProgramOption { return nil }

func (celURLLib) CompileOptions() []cel.EnvOption {
	getter := func(name, id string, f func(*url.URL) string) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{celURLType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			u, ok := v.(celURL)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(f(u.u))
		})))
	}
	return []cel.EnvOption{
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, celURLType, cel.UnaryBinding(celStringToURL))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, err := url.ParseRequestURI(string(s))
			return types.Bool(err == nil)
		}))),
		getter("getScheme", "url_get_scheme", func(u *url.URL) string { return u.Scheme }),
		getter("getHost", "url_get_host", func(u *url.URL) string { return u.Host }),
		getter("getHostname", "url_get_hostname", (*url.URL).Hostname),
		getter("getPort", "url_get_port", (*url.URL).Port),
		getter("getEscapedPath", "url_get_escaped_path", (*url.URL).EscapedPath),
		cel.Function("getQuery", cel.MemberOverload("url_get_query", []*cel.Type{celURLType}, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			cel.UnaryBinding(celURLQuery))),
	}
}

func celStringToURL(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	// ParseRequestURI checks the URL (absolute, as the "uri" format);
	// Parse reads it, as ParseRequestURI mistakes a fragment for part
	// of the path or query.
	if _, err := url.ParseRequestURI(string(s)); err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	u, err := url.Parse(string(s))
	if err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	return celURL{u: u}
}

func celURLQuery(v ref.Val) ref.Val {
	u, ok := v.(celURL)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	out := map[ref.Val]ref.Val{}
	for k, vals := range u.u.Query() {
		out[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, vals)
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, out)
}
