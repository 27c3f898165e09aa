package matchconditions

import (
	"errors"
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	kcel "github.com/kapi-dev/kapi/pkg/apiextensions/cel"
)

// Variables the expressions see, as upstream's webhook matchConditions
// environment declares them.
const (
	VarObject    = "object"
	VarOldObject = "oldObject"
	VarRequest   = "request"
)

// MaxConditions is the most matchConditions a webhook may have (upstream's
// validation limit).
const MaxConditions = 64

// costLimit bounds one evaluation, upstream's per-call limit for
// admission expressions (celconfig.PerCallLimit).
const costLimit = 1000000

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// Env is the environment of matchConditions: object, oldObject and
// request, all dynamically typed (objects are JSON maps), and upstream's
// authorizer and authorizer.requestResource (package celauthz).
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		opts := append(append(kcel.EnvOptions(), celauthz.EnvOptions()...),
			cel.Variable(VarObject, cel.DynType),
			cel.Variable(VarOldObject, cel.DynType),
			cel.Variable(VarRequest, cel.DynType),
		)
		env, envErr = cel.NewEnv(opts...)
	})
	return env, envErr
}

// Compile compiles one expression; the result must be a bool or dyn.
func Compile(expr string) (cel.Program, error) {
	e, err := Env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("must evaluate to bool")
	}
	return e.Program(ast, append([]cel.ProgramOption{cel.CostLimit(costLimit), cel.EvalOptions(cel.OptOptimize)}, kcel.CostTracking()...)...)
}

// Condition is one compiled condition.
type Condition struct {
	Name    string
	Program cel.Program
}

// Vars are the values of one evaluation; a nil object is CEL null.
type Vars struct {
	Object, OldObject map[string]any
	Request           map[string]any
	// Authz are the authorizer variables (celauthz.Bind); none: an
	// expression using them fails to evaluate.
	Authz map[string]any
}

func (v Vars) activation() map[string]any {
	m := map[string]any{VarObject: nil, VarOldObject: nil, VarRequest: v.Request}
	for k, a := range v.Authz {
		m[k] = a
	}
	if v.Object != nil {
		m[VarObject] = v.Object
	}
	if v.OldObject != nil {
		m[VarOldObject] = v.OldObject
	}
	return m
}

// ErrNotBool is returned for a condition that evaluated to a non-bool.
var ErrNotBool = errors.New("expression did not evaluate to a bool")

// Match evaluates conditions in order, as upstream: the first false one
// means no match (name returned); errors are collected and returned only
// when no condition was false.
func Match(conds []Condition, vars Vars) (matched bool, failed string, err error) {
	act := vars.activation()
	var errs []error
	for _, c := range conds {
		out, _, evalErr := c.Program.Eval(act)
		if evalErr != nil {
			errs = append(errs, fmt.Errorf("matchCondition %q: %w", c.Name, evalErr))
			continue
		}
		b, ok := asBool(out)
		if !ok {
			errs = append(errs, fmt.Errorf("matchCondition %q: %w", c.Name, ErrNotBool))
			continue
		}
		if !b {
			return false, c.Name, nil
		}
	}
	if len(errs) > 0 {
		return false, "", errors.Join(errs...)
	}
	return true, "", nil
}

func asBool(v ref.Val) (bool, bool) {
	b, ok := v.(types.Bool)
	return bool(b), ok
}
