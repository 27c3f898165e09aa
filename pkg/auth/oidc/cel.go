package oidc

import (
	"fmt"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
)

// celCostLimit bounds one evaluation (upstream uses the per-call limit of
// its CEL environments; a comparable bound here).
const celCostLimit = 1_000_000

// newEnv is the CEL environment of expressions over one variable (claims,
// or user), a map of string to dyn.
func newEnv(variable string) (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable(variable, cel.MapType(cel.StringType, cel.DynType)),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Lists(),
		ext.Sets(),
		ext.Encoders(),
		cel.HomogeneousAggregateLiterals(),
		cel.DefaultUTCTimeZone(true),
	)
}

// program is one compiled expression.
type program struct {
	expr string
	prg  cel.Program
}

func compile(env *cel.Env, expr string) (*program, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %w", iss.Err())
	}
	prg, err := env.Program(ast, cel.CostLimit(celCostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("program: %w", err)
	}
	return &program{expr: expr, prg: prg}, nil
}

func (p *program) eval(vars map[string]any) (any, error) {
	out, _, err := p.prg.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", p.expr, err)
	}
	return out.Value(), nil
}

func (p *program) evalBool(vars map[string]any) (bool, error) {
	v, err := p.eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q: must evaluate to bool, got %T", p.expr, v)
	}
	return b, nil
}

func (p *program) evalString(vars map[string]any) (string, error) {
	v, err := p.eval(vars)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("expression %q: must evaluate to string, got %T", p.expr, v)
	}
	return s, nil
}

// evalStrings accepts a string or a list of strings (groups, extra).
func (p *program) evalStrings(vars map[string]any) ([]string, error) {
	out, _, err := p.prg.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", p.expr, err)
	}
	if s, ok := out.Value().(string); ok {
		return []string{s}, nil
	}
	native, err := out.ConvertToNative(reflect.TypeFor[[]string]())
	if err != nil {
		return nil, fmt.Errorf("expression %q: must evaluate to one of string or list of strings: %w", p.expr, err)
	}
	return native.([]string), nil
}
