package validating

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"cel.dev/cel-go/common/types"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	"github.com/kapi-dev/kapi/pkg/admission/configsource"
	"github.com/kapi-dev/kapi/pkg/admission/policy/matching"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "ValidatingAdmissionPolicy"

// Params reads the param objects of policies, as JSON maps.
type Params = matching.Params

// Options are what the plugin reads besides policies and bindings.
type Options struct {
	Namespaces NamespaceGetter
	Params     Params // nil: policies with a paramKind fail (failurePolicy)
	// Authorizer answers the expressions' authorizer checks, for the
	// request's user (nil: an expression using authorizer fails to
	// evaluate).
	Authorizer authorizer.Authorizer
	// Equivalents returns the other group-versions a resource is served
	// as, for matchPolicy Equivalent; Convert converts objects to them
	// (both needed: else rules match the request's own resource only).
	Equivalents func(schema.GroupVersionResource) []admission.Equivalent
	Convert     admission.Converter
	Logger      *slog.Logger
}

// Plugin is the ValidatingAdmissionPolicy plugin.
type Plugin struct {
	policies *configsource.Source[*compiledPolicy]
	bindings *configsource.Source[*compiledBinding]
	opts     Options
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin over the policies and bindings the two stores
// hold. Run must be running for it to admit anything. status, if set,
// writes a policy's type-checking status (see [TypeCheck]).
func New(policies, bindings configsource.ListWatcher, status StatusWriter, opts Options) *Plugin {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	p := &Plugin{
		policies: configsource.New(policies, compilePolicy, opts.Logger),
		bindings: configsource.New(bindings, compileBinding, opts.Logger),
		opts:     opts,
	}
	if status != nil {
		p.policies.OnChange = func(ctx context.Context, obj runtime.Object) {
			if vap, ok := obj.(*arv1.ValidatingAdmissionPolicy); ok {
				writeTypeChecking(ctx, status, vap, opts.Logger)
			}
		}
	}
	return p
}

// Run keeps the policies and bindings up to date until ctx ends.
func (p *Plugin) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() { defer close(done); p.bindings.Run(ctx) }()
	p.policies.Run(ctx)
	<-done
}

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles every operation.
func (p *Plugin) Handles(admission.Operation) bool { return true }

// exempt: policies never apply to the admission configuration resources
// themselves, as upstream. (A function, not a variable holding
// matching.Exempt: called through a variable, escape analysis cannot see
// that a does not escape, and every request's Attributes were copied to
// the heap to ask.)
func exempt(a *admission.Attributes) bool { return matching.Exempt(a) }

// decision is one failed validation (or error) of one binding.
type decision struct {
	policy, binding string
	message         string
	reason          metav1.StatusReason
	index           int
	actions         []arv1.ValidationAction
}

// ReadsObjects implements admission.ObjectReader: no policy reads a's
// objects when a is exempt, or the policies are known and there are none.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	return !exempt(&a) && !p.policies.Empty()
}

// Validate evaluates every binding whose policy matches a.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if exempt(&a) {
		return nil
	}
	policies, err := p.policies.Items(ctx)
	if err != nil {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	if len(policies) == 0 {
		return nil
	}
	return p.validate(ctx, a, policies)
}

// validate is Validate once there are policies. It takes its own copy of
// a, whose address the evaluation keeps: Validate's copy stays on the
// stack for the requests no policy can concern.
func (p *Plugin) validate(ctx context.Context, a admission.Attributes, policies []*compiledPolicy) error {
	bindings, err := p.bindings.Items(ctx)
	if err != nil {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	byName := make(map[string]*compiledPolicy, len(policies))
	for _, cp := range policies {
		byName[cp.name] = cp
	}
	inputs := map[match]*input{}
	var authz map[string]any
	var ns *nsHolder
	var eqs []admission.Equivalent
	var eqsRead bool
	equivalents := func() []admission.Equivalent {
		if !eqsRead && p.opts.Convert != nil {
			eqs, eqsRead = admission.Equivalents(p.opts.Equivalents, &a), true
		}
		return eqs
	}
	var denied []decision
	var auditFailures []map[string]any
	for _, b := range bindings {
		cp := byName[b.policy]
		if cp == nil || cp.match == nil {
			continue
		}
		if ns == nil {
			ns = &nsHolder{v: namespaceOf(ctx, p.opts.Namespaces, &a)}
		}
		m, ok := cp.match.MatchesAs(&a, ns.v, equivalents)
		if !ok {
			continue
		}
		if b.match != nil {
			if _, ok := b.match.MatchesAs(&a, ns.v, equivalents); !ok {
				continue
			}
		}
		in := inputs[m]
		if in == nil {
			if authz == nil {
				authz = map[string]any{}
				celauthz.Bind(authz, ctx, p.opts.Authorizer, &a)
			}
			if in, err = p.newInput(ctx, &a, m, ns.v); err != nil {
				// As upstream: a failed conversion is an internal error.
				return apierrors.NewInternalError(err)
			}
			in.authz = authz
			inputs[m] = in
		}
		decisions := p.evaluate(ctx, cp, b, &a, in)
		for _, d := range decisions {
			for _, act := range d.actions {
				switch act {
				case arv1.Deny:
					denied = append(denied, d)
				case arv1.Warn:
					warning.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", d.policy, d.binding, d.message))
				case arv1.Audit:
					auditFailures = append(auditFailures, map[string]any{
						"message": d.message, "policy": d.policy, "binding": d.binding,
						"expressionIndex": d.index, "validationActions": d.actions,
					})
				}
			}
		}
	}
	if len(auditFailures) > 0 {
		v, _ := json.Marshal(auditFailures)
		audit.AddAnnotation(ctx, "validation.policy.admission.k8s.io/validation_failure", string(v))
	}
	if len(denied) == 0 {
		return nil
	}
	d := denied[0]
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	st := apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New(msg))
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	st.ErrStatus.Reason = reason
	st.ErrStatus.Code = reasonCode(reason)
	st.ErrStatus.Details.Causes = append(st.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	return st
}

type nsHolder struct{ v *corev1.Namespace }

func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	case metav1.StatusReasonInvalid:
		return http.StatusUnprocessableEntity
	}
	return http.StatusUnprocessableEntity
}

// failure is an error of one binding, decided by the failure policy.
func failure(cp *compiledPolicy, b *compiledBinding, err error) []decision {
	if cp.failurePolicy == arv1.Ignore {
		return nil
	}
	return []decision{{policy: cp.name, binding: b.name, message: err.Error(), actions: b.actions}}
}

// evaluate runs one binding: once per param object (or once without
// params).
func (p *Plugin) evaluate(ctx context.Context, cp *compiledPolicy, b *compiledBinding, a *admission.Attributes, in *input) []decision {
	if cp.err != nil {
		return failure(cp, b, cp.err)
	}
	if b.err != nil {
		return failure(cp, b, fmt.Errorf("failed to configure binding: %w", b.err))
	}
	params, err := p.params(ctx, cp, b, a)
	if err != nil {
		return failure(cp, b, fmt.Errorf("failed to configure binding: %w", err))
	}
	var out []decision
	for _, param := range params {
		out = append(out, p.evaluateOne(ctx, cp, b, in, param)...)
	}
	return out
}

func (p *Plugin) params(ctx context.Context, cp *compiledPolicy, b *compiledBinding, a *admission.Attributes) ([]map[string]any, error) {
	return matching.ResolveParams(ctx, p.opts.Params, cp.paramKind, b.paramRef, b.paramSel, a)
}

// evaluateOne runs the match conditions, variables, validations and audit
// annotations with one param object.
func (p *Plugin) evaluateOne(ctx context.Context, cp *compiledPolicy, b *compiledBinding, in *input, param map[string]any) []decision {
	act := in.activation(param)
	vars := map[string]any{}
	act[varVariables] = vars
	for _, v := range cp.variables {
		out, _, err := v.prg.Eval(act)
		if err != nil {
			// A variable is evaluated when used upstream; an error in an
			// unused variable is reported here too.
			return failure(cp, b, fmt.Errorf("variable %q resulted in error: %w", v.name, err))
		}
		vars[v.name] = out
	}
	for _, c := range cp.conditions {
		out, _, err := c.prg.Eval(act)
		if err != nil {
			return failure(cp, b, fmt.Errorf("failed to evaluate match condition %q: %w", c.name, err))
		}
		if ok, isBool := out.(types.Bool); !isBool {
			return failure(cp, b, fmt.Errorf("match condition %q did not evaluate to a bool", c.name))
		} else if !ok {
			return nil
		}
	}
	var out []decision
	for i, v := range cp.validations {
		res, _, err := v.prg.Eval(act)
		if err != nil {
			if cp.failurePolicy == arv1.Fail {
				out = append(out, decision{policy: cp.name, binding: b.name, index: i, actions: b.actions,
					message: fmt.Sprintf("expression '%s' resulted in error: %v", v.expr, err)})
			}
			continue
		}
		if ok, isBool := res.(types.Bool); isBool && bool(ok) {
			continue
		} else if !isBool {
			if cp.failurePolicy == arv1.Fail {
				out = append(out, decision{policy: cp.name, binding: b.name, index: i, actions: b.actions,
					message: fmt.Sprintf("expression '%s' resulted in error: expected boolean, got %s", v.expr, res.Type())})
			}
			continue
		}
		out = append(out, decision{policy: cp.name, binding: b.name, index: i, actions: b.actions, reason: v.reason, message: v.failureMessage(act)})
	}
	for _, an := range cp.annotations {
		res, _, err := an.prg.Eval(act)
		if err != nil {
			if cp.failurePolicy == arv1.Fail {
				out = append(out, decision{policy: cp.name, binding: b.name, actions: b.actions,
					message: fmt.Sprintf("valueExpression '%s' resulted in error: %v", an.expr, err)})
			}
			continue
		}
		if s, ok := res.(types.String); ok && s != "" {
			audit.AddAnnotation(ctx, cp.name+"/"+an.name, string(s))
		}
	}
	return out
}

// failureMessage is the messageExpression's result, else the message,
// else "failed expression: <expression>" (upstream's order).
func (v *validation) failureMessage(act map[string]any) string {
	if v.messagePrg != nil {
		if res, _, err := v.messagePrg.Eval(act); err == nil {
			if s, ok := res.(types.String); ok && strings.TrimSpace(string(s)) != "" && !strings.ContainsAny(string(s), "\n") {
				return string(s)
			}
		}
	}
	if v.message != "" {
		return v.message
	}
	return "failed expression: " + strings.TrimSpace(v.expr)
}

// input is what every evaluation of one request shares.
type input struct {
	object, oldObject, request, namespace any
	// authz holds the authorizer variables (package celauthz).
	authz map[string]any
}

// newInput is the input of the policies that matched a as m: the
// objects converted to m's kind when it is an equivalent one; request's
// kind and resource are then m's, requestKind and requestResource a's
// (upstream's VersionedAttributes).
func (p *Plugin) newInput(ctx context.Context, a *admission.Attributes, m match, ns *corev1.Namespace) (*input, error) {
	orig := a
	if m.Kind != a.Kind || m.Resource != a.Resource {
		conv := *a
		conv.Resource, conv.Kind = m.Resource, m.Kind
		var err error
		if a.Object != nil && m.Kind != a.Kind {
			if conv.Object, err = p.opts.Convert(ctx, a.Object, m.Kind); err != nil {
				return nil, fmt.Errorf("failed to convert object version: %w", err)
			}
		}
		if a.OldObject != nil && m.Kind != a.Kind {
			if conv.OldObject, err = p.opts.Convert(ctx, a.OldObject, m.Kind); err != nil {
				return nil, fmt.Errorf("failed to convert object version: %w", err)
			}
		}
		a = &conv
	}
	req := matching.RequestValue(a)
	// requestKind and requestResource are the request's own.
	req["requestKind"] = map[string]any{"group": orig.Kind.Group, "version": orig.Kind.Version, "kind": orig.Kind.Kind}
	req["requestResource"] = map[string]any{"group": orig.Resource.Group, "version": orig.Resource.Version, "resource": orig.Resource.Resource}
	in := &input{request: req}
	var err error
	if in.object, err = toMap(a.Object, a); err != nil {
		return nil, err
	}
	if in.oldObject, err = toMap(a.OldObject, a); err != nil {
		return nil, err
	}
	if m, err := matching.NamespaceValue(ns); err != nil {
		return nil, err
	} else if m != nil {
		in.namespace = m
	}
	return in, nil
}

// toMap is the object as CEL sees it (an untyped nil for none).
func toMap(obj runtime.Object, a *admission.Attributes) (any, error) {
	m, err := matching.ObjectValue(obj, a)
	if m == nil || err != nil {
		return nil, err
	}
	return m, nil
}

func (in *input) activation(param map[string]any) map[string]any {
	act := map[string]any{
		varObject: in.object, varOldObject: in.oldObject, varRequest: in.request,
		varNamespaceObject: in.namespace, varParams: nil,
	}
	if param != nil {
		act[varParams] = param
	}
	for k, v := range in.authz {
		act[k] = v
	}
	return act
}
