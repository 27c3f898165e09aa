package mutating

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// dynTolerantLiterals replaces cel-go's homogeneous aggregate literal
// validator (same name) in the mutating policies' environment: list and
// map literals must still have elements of one type, but dyn matches any
// type. Upstream types object, params and variables from schemas and
// expressions, so `{"a": variables.x, "b": "y"}` has string values there;
// here variables and object fields are dyn, and the stock validator would
// refuse such literals.
type dynTolerantLiterals struct{}

func (dynTolerantLiterals) Name() string { return "cel.validator.homogeneous_literals" }

func (dynTolerantLiterals) Validate(_ *cel.Env, _ cel.ValidatorConfig, a *ast.AST, iss *cel.Issues) {
	root := ast.NavigateAST(a)
	check := func(id int64, want **types.Type, t *types.Type) bool {
		if t.IsExactType(types.DynType) {
			return true
		}
		if *want == nil {
			*want = t
			return true
		}
		if !(*want).IsEquivalentType(t) {
			iss.ReportErrorAtID(id, "%s", fmt.Sprintf("expected type '%s' but found '%s'", (*want).String(), t.String()))
			return false
		}
		return true
	}
	for _, e := range ast.MatchDescendants(root, ast.KindMatcher(ast.ListKind)) {
		var elem *types.Type
		for _, x := range e.AsList().Elements() {
			if !check(x.ID(), &elem, a.GetType(x.ID())) {
				break
			}
		}
	}
	for _, e := range ast.MatchDescendants(root, ast.KindMatcher(ast.MapKind)) {
		var kt, vt *types.Type
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			v := a.GetType(me.Value().ID())
			if me.IsOptional() && len(v.Parameters()) == 1 {
				v = v.Parameters()[0]
			}
			if !check(me.Key().ID(), &kt, a.GetType(me.Key().ID())) || !check(me.Value().ID(), &vt, v) {
				break
			}
		}
	}
}
