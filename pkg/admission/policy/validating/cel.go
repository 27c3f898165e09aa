package validating

import (
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"

	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	kcel "github.com/kapi-dev/kapi/pkg/apiextensions/cel"
)

// Variables of the policies' expressions, as upstream names them.
const (
	varObject          = "object"
	varOldObject       = "oldObject"
	varRequest         = "request"
	varParams          = "params"
	varNamespaceObject = "namespaceObject"
	varVariables       = "variables"
)

// perCallLimit is upstream's cost limit of one expression evaluation
// (k8s.io/apiserver pkg/apis/cel PerCallLimit).
const perCallLimit = 1000000

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// Env is the policies' CEL environment. Objects, params and the request
// are JSON maps, so they are declared dyn: type errors on them surface at
// evaluation, not at compilation (upstream types object and params from
// the OpenAPI schemas of the matched kinds; see [TypeCheck]). The
// authorizer and authorizer.requestResource variables are upstream's
// (package celauthz).
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		opts := append(append(kcel.EnvOptions(), celauthz.EnvOptions()...),
			cel.Variable(varObject, cel.DynType),
			cel.Variable(varOldObject, cel.DynType),
			cel.Variable(varRequest, cel.DynType),
			cel.Variable(varParams, cel.DynType),
			cel.Variable(varNamespaceObject, cel.DynType),
			cel.Variable(varVariables, cel.MapType(cel.StringType, cel.DynType)),
		)
		env, envErr = cel.NewEnv(opts...)
	})
	return env, envErr
}

// Result types an expression may be required to have.
var (
	wantBool   = types.BoolType
	wantString = types.StringType
)

// Compile compiles expr; want (nil: any) is the result type it must have
// (or dyn).
func Compile(expr string, want *types.Type) (cel.Program, error) {
	e, err := Env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if want != nil {
		if t := ast.OutputType(); !t.IsExactType(want) && !t.IsExactType(types.DynType) {
			return nil, fmt.Errorf("must evaluate to %s but got %s", want, t)
		}
	}
	return e.Program(ast, append([]cel.ProgramOption{cel.CostLimit(perCallLimit), cel.EvalOptions(cel.OptOptimize)}, kcel.CostTracking()...)...)
}

// CompileBool compiles a validation or match condition.
func CompileBool(expr string) (cel.Program, error) { return Compile(expr, wantBool) }

// CompileString compiles a messageExpression or an audit annotation's
// valueExpression (string, or null for the latter).
func CompileString(expr string) (cel.Program, error) { return Compile(expr, nil) }
