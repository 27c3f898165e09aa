package mutating

import (
	"fmt"

	"cel.dev/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission/policy/matching"
)

// compiledPolicy is a MutatingAdmissionPolicy ready to evaluate.
type compiledPolicy struct {
	name          string
	failurePolicy arv1.FailurePolicyType
	paramKind     *arv1.ParamKind
	match         *matching.Matcher // nil: matches nothing (invalid policy)
	conditions    []namedProgram
	variables     []namedProgram
	mutations     []mutation
	reinvoke      bool
	// err is set when an expression does not compile: every request the
	// policy applies to is an error, subject to failurePolicy.
	err error
}

type namedProgram struct {
	name, expr string
	prg        cel.Program
}

type mutation struct {
	patchType arv1.PatchType
	expr      string
	prg       cel.Program
}

// compilePolicy compiles a policy object (a configsource compile func).
func compilePolicy(obj runtime.Object) []*compiledPolicy {
	p, ok := obj.(*arv1.MutatingAdmissionPolicy)
	if !ok {
		return nil
	}
	cp := &compiledPolicy{
		name: p.Name, failurePolicy: arv1.Fail, paramKind: p.Spec.ParamKind,
		reinvoke: p.Spec.ReinvocationPolicy == arv1.IfNeededReinvocationPolicy,
	}
	if p.Spec.FailurePolicy != nil {
		cp.failurePolicy = *p.Spec.FailurePolicy
	}
	fail := func(err error) {
		if cp.err == nil {
			cp.err = err
		}
	}
	if p.Spec.MatchConstraints != nil {
		m, err := matching.NewMatcher(p.Spec.MatchConstraints)
		if err != nil {
			fail(err)
		}
		cp.match = m
	}
	for _, c := range p.Spec.MatchConditions {
		prg, err := CompileBool(c.Expression)
		if err != nil {
			fail(fmt.Errorf("compilation failed for matchCondition %q: %w", c.Name, err))
			continue
		}
		cp.conditions = append(cp.conditions, namedProgram{c.Name, c.Expression, prg})
	}
	for _, v := range p.Spec.Variables {
		prg, err := CompileVariable(v.Expression)
		if err != nil {
			fail(fmt.Errorf("compilation failed for variable %q: %w", v.Name, err))
			continue
		}
		cp.variables = append(cp.variables, namedProgram{v.Name, v.Expression, prg})
	}
	for i, m := range p.Spec.Mutations {
		var expr string
		var prg cel.Program
		var err error
		switch {
		case m.PatchType == arv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			expr = m.ApplyConfiguration.Expression
			prg, err = CompileApplyConfiguration(expr)
		case m.PatchType == arv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			expr = m.JSONPatch.Expression
			prg, err = CompileJSONPatch(expr)
		default:
			err = fmt.Errorf("unsupported patch type %q", m.PatchType)
		}
		if err != nil {
			fail(fmt.Errorf("compilation failed for mutation %d: %w", i, err))
			continue
		}
		cp.mutations = append(cp.mutations, mutation{patchType: m.PatchType, expr: expr, prg: prg})
	}
	return []*compiledPolicy{cp}
}

// compiledBinding is a MutatingAdmissionPolicyBinding.
type compiledBinding struct {
	name, policy string
	paramRef     *arv1.ParamRef
	paramSel     labels.Selector
	match        *matching.Matcher // nil: everything the policy matches
	err          error
}

func compileBinding(obj runtime.Object) []*compiledBinding {
	b, ok := obj.(*arv1.MutatingAdmissionPolicyBinding)
	if !ok {
		return nil
	}
	cb := &compiledBinding{name: b.Name, policy: b.Spec.PolicyName, paramRef: b.Spec.ParamRef}
	if b.Spec.MatchResources != nil {
		m, err := matching.NewMatcher(b.Spec.MatchResources)
		if err != nil {
			cb.err = err
		}
		cb.match = m
	}
	if b.Spec.ParamRef != nil && b.Spec.ParamRef.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.ParamRef.Selector)
		if err != nil && cb.err == nil {
			cb.err = err
		}
		cb.paramSel = sel
	}
	return []*compiledBinding{cb}
}
