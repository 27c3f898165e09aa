package cel

import (
	"fmt"
	"net/url"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// urlType is the CEL type of a URL, named as upstream.
var urlType = cel.ObjectType("kubernetes.URL")

// urlValue is a URL as a CEL value.
type urlValue struct {
	u *url.URL
}

// ConvertToNative implements ref.Val.
func (v urlValue) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.u).AssignableTo(t) {
		return v.u, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.u.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'URL' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v urlValue) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case urlType:
		return v
	case types.TypeType:
		return urlType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", urlType, t)
}

// Equal implements ref.Val.
func (v urlValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(urlValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.u.String() == o.u.String())
}

// Type implements ref.Val.
func (urlValue) Type() ref.Type { return urlType }

// Value implements ref.Val.
func (v urlValue) Value() any { return v.u }

// urlLibrary is upstream's url library: url and isURL accept the
// absolute URLs and absolute paths of url.ParseRequestURI (as the
// OpenAPI "uri" format); getScheme, getHost, getHostname, getPort,
// getEscapedPath and getQuery read them.
func urlLibrary() cel.EnvOption {
	return cel.Lib(urlLib{})
}

type urlLib struct{}

func (urlLib) LibraryName() string { return "kubernetes.urls" }

func (urlLib) ProgramOptions() []cel.ProgramOption { return nil }

func (urlLib) CompileOptions() []cel.EnvOption {
	getter := func(name, id string, f func(*url.URL) string) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{urlType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			u, ok := v.(urlValue)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(f(u.u))
		})))
	}
	return []cel.EnvOption{
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType, cel.UnaryBinding(stringToURL))),
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
		cel.Function("getQuery", cel.MemberOverload("url_get_query", []*cel.Type{urlType}, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			cel.UnaryBinding(urlQuery))),
	}
}

func stringToURL(v ref.Val) ref.Val {
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
	return urlValue{u: u}
}

func urlQuery(v ref.Val) ref.Val {
	u, ok := v.(urlValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	out := map[ref.Val]ref.Val{}
	for k, vals := range u.u.Query() {
		out[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, vals)
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, out)
}
