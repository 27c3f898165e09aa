package mutating

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	"github.com/kapi-dev/kapi/pkg/admission/policy/matching"
	kcel "github.com/kapi-dev/kapi/pkg/apiextensions/cel"
)

// perCallLimit is upstream's cost limit of one expression evaluation
// (k8s.io/apiserver pkg/apis/cel PerCallLimit).
const perCallLimit = 1000000

// Type names the mutations' expressions construct values of, as upstream
// names them: Object and Object.<field>... (apply configurations and
// patch values) and JSONPatch (k8s.io/apiserver pkg/cel/mutation).
const (
	objectTypeName    = "Object"
	jsonPatchTypeName = "JSONPatch"
)

var jsonPatchFields = []string{"op", "path", "from", "value"}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// Env is the mutating policies' CEL environment: the variables of the
// validating policies (object, oldObject, request, params,
// namespaceObject, variables; all dyn, see package validating), the
// Object and JSONPatch types and the jsonpatch.escapeKey function.
//
// Upstream types Object and its fields from the OpenAPI schema of the
// matched kind; here every Object type has any field, of type dyn, so a
// misspelled field is an error when the result is applied (the patched
// object fails to decode or validate), not when the policy is compiled.
// The authorizer and authorizer.requestResource variables are upstream's
// (package celauthz), as in validating policies.
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		opts := append(append(kcel.EnvOptions(), celauthz.EnvOptions()...),
			cel.Variable(matching.VarObject, cel.DynType),
			cel.Variable(matching.VarOldObject, cel.DynType),
			cel.Variable(matching.VarRequest, cel.DynType),
			cel.Variable(matching.VarParams, cel.DynType),
			cel.Variable(matching.VarNamespaceObject, cel.DynType),
			cel.Variable(matching.VarVariables, cel.MapType(cel.StringType, cel.DynType)),
			cel.Function("jsonpatch.escapeKey",
				cel.Overload("string_jsonpatch_escapeKey_string", []*cel.Type{cel.StringType}, cel.StringType,
					cel.UnaryBinding(escapeKey))),
			cel.ASTValidators(dynTolerantLiterals{}),
		)
		base, err := cel.NewEnv(opts...)
		if err != nil {
			envErr = err
			return
		}
		env, envErr = base.Extend(cel.CustomTypeProvider(&objectTypes{base: base.CELTypeProvider()}))
	})
	return env, envErr
}

// escapeKey escapes a JSON pointer token (RFC 6901): ~ as ~0, / as ~1.
func escapeKey(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	return types.String(strings.NewReplacer("~", "~0", "/", "~1").Replace(string(s)))
}

// objectTypes adds the Object and JSONPatch types to a provider. Their
// values are CEL maps of the fields set.
type objectTypes struct{ base types.Provider }

func isObjectType(name string) bool {
	return name == objectTypeName || strings.HasPrefix(name, objectTypeName+".")
}

func (p *objectTypes) EnumValue(name string) ref.Val { return p.base.EnumValue(name) }

func (p *objectTypes) FindIdent(name string) (ref.Val, bool) { return p.base.FindIdent(name) }

func (p *objectTypes) FindStructType(name string) (*types.Type, bool) {
	if isObjectType(name) || name == jsonPatchTypeName {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.base.FindStructType(name)
}

func (p *objectTypes) FindStructFieldNames(name string) ([]string, bool) {
	switch {
	case name == jsonPatchTypeName:
		return jsonPatchFields, true
	case isObjectType(name):
		return nil, true
	}
	return p.base.FindStructFieldNames(name)
}

// FindStructFieldType: JSONPatch's op, path and from are strings, value
// is dyn; an Object type's fields are dyn. No field getters: the values
// are maps, read as maps.
func (p *objectTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	switch {
	case name == jsonPatchTypeName:
		switch field {
		case "op", "path", "from":
			return &types.FieldType{Type: types.StringType}, true
		case "value":
			return &types.FieldType{Type: types.DynType}, true
		}
		return nil, false
	case isObjectType(name):
		return &types.FieldType{Type: types.DynType}, true
	}
	return p.base.FindStructFieldType(name, field)
}

func (p *objectTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if !isObjectType(name) && name != jsonPatchTypeName {
		return p.base.NewValue(name, fields)
	}
	m := make(map[ref.Val]ref.Val, len(fields))
	for k, v := range fields {
		m[types.String(k)] = v
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m)
}

// Compile compiles expr; want (nil: any) is the result type it must have
// (or dyn), named wantName in the error.
func Compile(expr string, want *types.Type, wantName string) (cel.Program, error) {
	e, err := Env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if want != nil {
		if t := ast.OutputType(); !t.IsAssignableType(want) && !t.IsExactType(types.DynType) {
			return nil, fmt.Errorf("must evaluate to %s but got %s", wantName, t)
		}
	}
	return e.Program(ast, append([]cel.ProgramOption{cel.CostLimit(perCallLimit), cel.EvalOptions(cel.OptOptimize)}, kcel.CostTracking()...)...)
}

// Result types of the mutations.
var (
	applyConfigurationType = types.NewObjectType(objectTypeName)
	jsonPatchListType      = types.NewListType(types.NewObjectType(jsonPatchTypeName))
)

// CompileBool compiles a match condition.
func CompileBool(expr string) (cel.Program, error) { return Compile(expr, types.BoolType, "bool") }

// CompileVariable compiles a variable (any type).
func CompileVariable(expr string) (cel.Program, error) { return Compile(expr, nil, "") }

// CompileApplyConfiguration compiles an ApplyConfiguration expression:
// it must build an Object.
func CompileApplyConfiguration(expr string) (cel.Program, error) {
	return Compile(expr, applyConfigurationType, "Object")
}

// CompileJSONPatch compiles a JSONPatch expression: it must build a
// list of JSONPatch.
func CompileJSONPatch(expr string) (cel.Program, error) {
	return Compile(expr, jsonPatchListType, "list(JSONPatch)")
}

// errNotJSON is returned when a value has no JSON form.
var errNotJSON = errors.New("value has no JSON representation")
