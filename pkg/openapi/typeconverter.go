package openapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Parser returns structured-merge-diff type information for every
// definition, named by REST-friendly name, so that server-side apply can do
//
//	parser.Type("io.k8s.api.core.v1.ConfigMap").FromStructured(obj)
//
// Its types are what schemaconv makes of the OpenAPI v3 definitions
// (x-kubernetes-list-type, -list-map-keys, -map-type and the
// patch-strategy extensions give lists and maps their merge semantics),
// computed when the definitions are generated (zz_generated.smd.go,
// checked against a fresh conversion by TestGeneratedSMDTypesEqualComputed)
// rather than at every process start (~10 ms of CPU and 5 MB there).
// Unknown fields are not preserved: built-in types are closed. The error is
// always nil (kept for callers of the API that converted at run time).
func (d *Definitions) Parser() (*typed.Parser, error) {
	return d.parser(), nil
}

// newParser wraps the generated types. The types, and the maps and lists
// they point at, are shared by every Parser of the process and never
// modified: structured-merge-diff treats a schema as immutable (its maps'
// field indexes are built once, under a sync.Once).
func newParser() *typed.Parser {
	return &typed.Parser{Schema: smdschema.Schema{Types: generatedSMDTypes}}
}

// TypeConverter returns the managedfields.TypeConverter of every kind with a
// definition, for managedfields.NewDefaultFieldManager. It shares the
// [Definitions.Parser]. Objects of a kind it does not know fail with a
// runtime not-registered error, which managedfields treats as a missing
// version.
func (d *Definitions) TypeConverter() (managedfields.TypeConverter, error) {
	p, err := d.Parser()
	if err != nil {
		return nil, err
	}
	return &typeConverter{defs: d, parser: p}, nil
}

type typeConverter struct {
	defs   *Definitions
	parser *typed.Parser
}

var _ managedfields.TypeConverter = (*typeConverter)(nil)

func (c *typeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	name, ok := c.defs.nameByGVK[gvk]
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("openapi", gvk)
	}
	t := c.parser.Type(name)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return t.FromUnstructured(u.UnstructuredContent(), opts...)
	}
	return t.FromStructured(obj, opts...)
}

func (c *typeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	u := v.AsValue().Unstructured()
	m, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("typed value is a %T, not an object", u)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
