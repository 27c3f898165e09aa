package webhook

import (
	"encoding/json"
	"errors"
	"fmt"

	"cel.dev/cel-go/cel"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// matcher holds compiled matchConditions: CEL expressions over `request`
// (the SubjectAccessReview spec, v1 field names) that must all be true for
// the webhook to be asked; otherwise it has no opinion.
type matcher struct {
	programs []cel.Program
}

// compileMatchConditions compiles exprs; each must return a bool.
func compileMatchConditions(exprs []string) (*matcher, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	env, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		return nil, err
	}
	m := &matcher{}
	var errs []error
	for i, e := range exprs {
		ast, iss := env.Compile(e)
		if iss.Err() != nil {
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: compilation failed: %w", i, iss.Err()))
			continue
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: must evaluate to bool", i))
			continue
		}
		p, err := env.Program(ast)
		if err != nil {
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: %w", i, err))
			continue
		}
		m.programs = append(m.programs, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// matches reports whether every condition holds for spec; an evaluation
// error is returned (the failure policy then decides).
func (m *matcher) matches(spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	if m == nil {
		return true, nil
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return false, err
	}
	var req map[string]any
	if err := json.Unmarshal(raw, &req); err != nil {
		return false, err
	}
	for i, p := range m.programs {
		out, _, err := p.Eval(map[string]any{"request": req})
		if err != nil {
			return false, fmt.Errorf("matchConditions[%d]: %w", i, err)
		}
		b, ok := out.Value().(bool)
		if !ok {
			return false, fmt.Errorf("matchConditions[%d]: not a bool: %v", i, out.Value())
		}
		if !b {
			return false, nil
		}
	}
	return true, nil
}
