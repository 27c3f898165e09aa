package openapi

import (
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// param is one operation parameter: in "path", "query" or "body".
type param struct {
	name, in, description string
	// typ is the JSON type of a path or query parameter.
	typ      string
	required bool
}

const (
	inPath  = "path"
	inQuery = "query"
)

// Descriptions of the parameters the installer adds itself, as upstream
// words them (k8s.io/apiserver pkg/endpoints/installer.go).
const (
	prettyDescription    = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."
	namespaceDescription = "object name and auth scope, such as for teams and projects"
)

func prettyParam() param {
	return param{name: "pretty", in: inQuery, description: prettyDescription, typ: "string"}
}

func namespaceParam() param {
	return param{name: "namespace", in: inPath, description: namespaceDescription, typ: "string", required: true}
}

func nameParam(kind string) param {
	return param{name: "name", in: inPath, description: "name of the " + kind, typ: "string", required: true}
}

// The query parameters of each options kind, derived once from the types
// of k8s.io/apimachinery the way upstream's installer derives them
// (AddObjectParams): every top-level field with a JSON name whose type is
// not a struct, an interface or a pointer to one becomes a query
// parameter of that name, described by the type's SwaggerDoc. Following
// the types keeps the parameters in step with apimachinery: ListOptions
// brings sendInitialEvents and shardSelector, DeleteOptions
// ignoreStoreReadErrorWithClusterBreakingPotential.
var optionParams = sync.OnceValue(func() map[string][]param {
	return map[string][]param{
		"list":   objectParams(metav1.ListOptions{}),
		"get":    objectParams(metav1.GetOptions{}),
		"create": objectParams(metav1.CreateOptions{}),
		"update": objectParams(metav1.UpdateOptions{}),
		"patch":  objectParams(metav1.PatchOptions{}),
		"delete": objectParams(metav1.DeleteOptions{}),
	}
})

// swaggerDocumented is implemented by the API types (SwaggerDoc).
type swaggerDocumented interface {
	SwaggerDoc() map[string]string
}

// objectParams returns the query parameters of an options type (a struct
// or a pointer to one), in field order.
func objectParams(obj any) []param {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var docs map[string]string
	if d, ok := obj.(swaggerDocumented); ok {
		docs = d.SwaggerDoc()
	}
	var out []param
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct || ft.Kind() == reflect.Interface {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, param{name: name, in: inQuery, description: docs[name], typ: jsonType(ft)})
	}
	return out
}

// jsonType is the JSON type of a query parameter of Go type t. Slices are
// repeated parameters of their element's type, as upstream documents them.
func jsonType(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "string"
	}
}

// queryParams returns the query parameters of the options kind, without
// the names excluded.
func queryParams(options string, exclude ...string) []param {
	all := optionParams()[options]
	out := make([]param, 0, len(all))
	for _, p := range all {
		skip := false
		for _, e := range exclude {
			if p.name == e {
				skip = true
				break
			}
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}
