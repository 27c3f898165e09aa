package validating

import (
	"fmt"

	"cel.dev/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// compiledPolicy is a ValidatingAdmissionPolicy ready to evaluate.
type compiledPolicy struct {
	name          string
	failurePolicy arv1.FailurePolicyType
	paramKind     *arv1.ParamKind
	match         *matcher // nil: matches nothing (invalid policy)
	conditions    []namedProgram
	variables     []namedProgram
	validations   []validation
	annotations   []namedProgram
	// err is set when an expression does not compile: every request the
	// policy applies to is an error, subject to failurePolicy.
	err error
}

type namedProgram struct {
	name, expr string
	prg        cel.Program
}

type validation struct {
	expr, message string
	reason        metav1.StatusReason
	prg           cel.Program
	messagePrg    cel.Program
	messageExpr   string
}

// compilePolicy compiles a policy object (a configsource compile func).
func compilePolicy(obj runtime.Object) []*compiledPolicy {
	p, ok := obj.(*arv1.ValidatingAdmissionPolicy)
	if !ok {
		return nil
	}
	cp := &compiledPolicy{name: p.Name, failurePolicy: arv1.Fail, paramKind: p.Spec.ParamKind}
	if p.Spec.FailurePolicy != nil {
		cp.failurePolicy = *p.Spec.FailurePolicy
	}
	fail := func(err error) {
		if cp.err == nil {
			cp.err = err
		}
	}
	if p.Spec.MatchConstraints != nil {
		m, err := newMatcher(p.Spec.MatchConstraints)
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
		prg, err := Compile(v.Expression, nil)
		if err != nil {
			fail(fmt.Errorf("compilation failed for variable %q: %w", v.Name, err))
			continue
		}
		cp.variables = append(cp.variables, namedProgram{v.Name, v.Expression, prg})
	}
	for _, v := range p.Spec.Validations {
		prg, err := CompileBool(v.Expression)
		if err != nil {
			fail(fmt.Errorf("compilation failed for validation %q: %w", v.Expression, err))
			continue
		}
		val := validation{expr: v.Expression, message: v.Message, prg: prg, messageExpr: v.MessageExpression}
		if v.Reason != nil {
			val.reason = *v.Reason
		}
		if v.MessageExpression != "" {
			// A messageExpression that does not compile is ignored, the
			// message (or the default) is used, as upstream.
			val.messagePrg, _ = CompileString(v.MessageExpression)
		}
		cp.validations = append(cp.validations, val)
	}
	for _, a := range p.Spec.AuditAnnotations {
		prg, err := CompileString(a.ValueExpression)
		if err != nil {
			fail(fmt.Errorf("compilation failed for audit annotation %q: %w", a.Key, err))
			continue
		}
		cp.annotations = append(cp.annotations, namedProgram{a.Key, a.ValueExpression, prg})
	}
	return []*compiledPolicy{cp}
}

// compiledBinding is a ValidatingAdmissionPolicyBinding.
type compiledBinding struct {
	name, policy string
	paramRef     *arv1.ParamRef
	paramSel     labels.Selector
	match        *matcher // nil: everything the policy matches
	actions      []arv1.ValidationAction
	err          error
}

func compileBinding(obj runtime.Object) []*compiledBinding {
	b, ok := obj.(*arv1.ValidatingAdmissionPolicyBinding)
	if !ok {
		return nil
	}
	cb := &compiledBinding{name: b.Name, policy: b.Spec.PolicyName, paramRef: b.Spec.ParamRef, actions: b.Spec.ValidationActions}
	if b.Spec.MatchResources != nil {
		m, err := newMatcher(b.Spec.MatchResources)
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
