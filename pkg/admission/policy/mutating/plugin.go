package mutating

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	"github.com/kapi-dev/kapi/pkg/admission/configsource"
	"github.com/kapi-dev/kapi/pkg/admission/policy/matching"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "MutatingAdmissionPolicy"

// Options are what the plugin reads besides policies and bindings.
type Options struct {
	Namespaces matching.NamespaceGetter
	Params     matching.Params // nil: policies with a paramRef fail (failurePolicy)
	// TypeConverter gives the structured-merge-diff types of the
	// built-in kinds for ApplyConfiguration mutations, called on first
	// use; kinds it does not know (custom resources), or all when it is
	// nil or fails, are merged with the deduced schema.
	TypeConverter func() (managedfields.TypeConverter, error)
	// Default defaults a mutated built-in object, as a decoded one is
	// (nil: not defaulted).
	Default func(runtime.Object)
	// Authorizer answers the expressions' authorizer checks for the
	// request's user (nil: expressions using authorizer fail to
	// evaluate, as upstream without one).
	Authorizer authorizer.Authorizer
	Logger     *slog.Logger
}

// Plugin is the MutatingAdmissionPolicy plugin.
type Plugin struct {
	policies *configsource.Source[*compiledPolicy]
	bindings *configsource.Source[*compiledBinding]
	opts     Options
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin over the policies and bindings the two stores
// hold. Run must be running for it to admit anything.
func New(policies, bindings configsource.ListWatcher, opts Options) *Plugin {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Plugin{
		policies: configsource.New(policies, compilePolicy, opts.Logger),
		bindings: configsource.New(bindings, compileBinding, opts.Logger),
		opts:     opts,
	}
}

func (p *Plugin) typeConverter() managedfields.TypeConverter {
	if p.opts.TypeConverter == nil {
		return nil
	}
	tc, err := p.opts.TypeConverter()
	if err != nil {
		p.opts.Logger.Warn("mutating admission policy: no type converter, apply configurations use the deduced schema", "err", err)
		return nil
	}
	return tc
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

// Handles creates, updates and connects: a delete has no object to
// mutate (policies may not match DELETE).
func (p *Plugin) Handles(op admission.Operation) bool { return op != admission.Delete }

// policyError is a failed invocation (upstream's generic PolicyError).
type policyError struct {
	policy, binding string
	failurePolicy   arv1.FailurePolicyType
	err             error
	reason          metav1.StatusReason
}

func (e policyError) Error() string {
	return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy, e.binding, e.err)
}

// invocation is one binding of a policy matching the request.
type invocation struct {
	cp *compiledPolicy
	b  *compiledBinding
}

// Admit applies the mutations of every binding whose policy matches a,
// in the order of policy names, then binding names, then param objects;
// each mutation sees the object as the ones before left it. Bindings of
// policies with reinvocationPolicy IfNeeded are invoked once more when an
// invocation after theirs changed the object. Errors are collected and,
// for policies with failurePolicy Fail, refuse the request (upstream's
// message and reason) once every invocation has run; the object keeps
// the mutations that succeeded.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	if matching.Exempt(&a) || a.Object == nil || a.Operation == admission.Delete {
		return nil
	}
	policies, err := p.policies.Items(ctx)
	if err != nil {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	if len(policies) == 0 {
		return nil
	}
	return p.admit(ctx, a, policies)
}

// admit is Admit once there are policies. It takes its own copy of a,
// whose address the run keeps: Admit's copy stays on the stack for the
// requests no policy can concern.
func (p *Plugin) admit(ctx context.Context, a admission.Attributes, policies []*compiledPolicy) error {
	bindings, err := p.bindings.Items(ctx)
	if err != nil {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	byName := make(map[string]*compiledPolicy, len(policies))
	for _, cp := range policies {
		byName[cp.name] = cp
	}
	var invs []invocation
	for _, b := range bindings {
		if cp := byName[b.policy]; cp != nil && cp.match != nil {
			invs = append(invs, invocation{cp, b})
		}
	}
	if len(invs) == 0 {
		return nil
	}
	slices.SortFunc(invs, func(x, y invocation) int {
		return cmp.Or(cmp.Compare(x.cp.name, y.cp.name), cmp.Compare(x.b.name, y.b.name))
	})

	r := &run{p: p, a: &a, ctx: ctx}
	r.ns = matching.NamespaceOf(ctx, p.opts.Namespaces, &a)
	// Integers are int64 and other numbers float64 in every object the
	// plugin builds and compares (ToUnstructured, toJSON, decodeJSON and
	// structured-merge-diff keep them so).
	if r.obj, err = matching.ObjectValue(a.Object, &a); err != nil {
		return apierrors.NewInternalError(err)
	}
	r.start = r.obj
	for round := 0; round < 2; round++ {
		for _, inv := range invs {
			r.invoke(ctx, inv, round)
		}
		if len(r.reinvoke) == 0 {
			break
		}
	}
	if r.changed {
		if err := p.writeBack(&a, r.obj); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to convert object: %w", err))
		}
	}
	return r.failed(&a)
}

// run is the state of one Admit.
type run struct {
	p     *Plugin
	a     *admission.Attributes
	ns    *corev1.Namespace
	start map[string]any
	obj   map[string]any // the object as mutated so far
	// changed: obj differs from the admitted object.
	changed bool
	// invoked are the IfNeeded invocations run so far; reinvoke those to
	// run again (an invocation after them changed the object).
	invoked  []string
	reinvoke map[string]bool
	errs     []policyError
	// fixed are the CEL variables that do not change during an Admit.
	fixed map[string]any
	// ctx is the request's, for the authorizer's checks.
	ctx context.Context
}

func (r *run) fail(inv invocation, err error, reason metav1.StatusReason) {
	r.errs = append(r.errs, policyError{policy: inv.cp.name, binding: inv.b.name, failurePolicy: inv.cp.failurePolicy, err: err, reason: reason})
}

// current is the attributes with the object as mutated so far (the
// object selector sees its labels).
func (r *run) current() *admission.Attributes {
	if !r.changed {
		return r.a
	}
	cur := *r.a
	cur.Object = &unstructured.Unstructured{Object: r.obj}
	return &cur
}

func (r *run) invoke(ctx context.Context, inv invocation, round int) {
	a := r.current()
	if !inv.cp.match.Matches(a, r.ns) || (inv.b.match != nil && !inv.b.match.Matches(a, r.ns)) {
		return
	}
	if round == 0 {
		switch {
		case inv.cp.err != nil:
			r.fail(inv, fmt.Errorf("failed to configure policy: %w", inv.cp.err), "")
			return
		case inv.b.err != nil:
			r.fail(inv, fmt.Errorf("failed to configure binding: %w", inv.b.err), "")
			return
		}
	} else if inv.cp.err != nil || inv.b.err != nil {
		return
	}
	params, err := matching.ResolveParams(ctx, r.p.opts.Params, inv.cp.paramKind, inv.b.paramRef, inv.b.paramSel, a)
	if err != nil {
		if round == 0 {
			r.fail(inv, fmt.Errorf("failed to configure binding: %w", err), "")
		}
		return
	}
	for _, param := range params {
		key := invocationKey(inv, param)
		if round == 1 && !r.reinvoke[key] {
			continue
		}
		if ok, err := r.conditions(inv, param); err != nil {
			r.fail(inv, err, metav1.StatusReasonInvalid)
			continue
		} else if !ok {
			continue
		}
		before := r.obj
		for i := range inv.cp.mutations {
			if err := r.mutate(inv, i, param); err != nil {
				r.fail(inv, err, metav1.StatusReasonInvalid)
			}
		}
		if !reflect.DeepEqual(before, r.obj) {
			r.changed = !reflect.DeepEqual(r.start, r.obj)
			for _, k := range r.invoked {
				if k != key {
					if r.reinvoke == nil {
						r.reinvoke = map[string]bool{}
					}
					r.reinvoke[k] = true
				}
			}
		}
		if round == 0 && inv.cp.reinvoke {
			r.invoked = append(r.invoked, key)
		}
	}
}

// invocationKey names a (policy, binding, param) invocation.
func invocationKey(inv invocation, param map[string]any) string {
	key := inv.cp.name + "\x00" + inv.b.name
	if param != nil {
		u := unstructured.Unstructured{Object: param}
		key += "\x00" + u.GetNamespace() + "/" + u.GetName()
	}
	return key
}

// activation is the CEL input of an invocation, with the object as
// mutated so far. The request, old object and namespace values are
// built once per Admit.
func (r *run) activation(param map[string]any) (map[string]any, error) {
	if r.fixed == nil {
		a := r.a
		r.fixed = map[string]any{matching.VarRequest: matching.RequestValue(a), matching.VarOldObject: nil, matching.VarNamespaceObject: nil}
		celauthz.Bind(r.fixed, r.ctx, r.p.opts.Authorizer, a)
		if old, err := matching.ObjectValue(a.OldObject, a); err != nil {
			return nil, err
		} else if old != nil {
			r.fixed[matching.VarOldObject] = old
		}
		// As upstream, a namespace has no namespaceObject.
		if r.ns != nil && a.Resource.GroupResource() != corev1.Resource("namespaces") {
			nsv, err := matching.NamespaceValue(r.ns)
			if err != nil {
				return nil, err
			}
			r.fixed[matching.VarNamespaceObject] = nsv
		}
	}
	act := map[string]any{
		matching.VarObject: r.obj, matching.VarParams: nil, matching.VarVariables: map[string]any{},
	}
	for k, v := range r.fixed {
		act[k] = v
	}
	if param != nil {
		act[matching.VarParams] = param
	}
	return act, nil
}

// conditions evaluates the policy's match conditions (once per
// invocation, before its mutations): false if one is false, an error if
// none is false and one fails.
func (r *run) conditions(inv invocation, param map[string]any) (bool, error) {
	if len(inv.cp.conditions) == 0 {
		return true, nil
	}
	act, err := r.activation(param)
	if err != nil {
		return false, err
	}
	var firstErr error
	for _, c := range inv.cp.conditions {
		out, _, err := c.prg.Eval(act)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("failed to evaluate match condition %q: %w", c.name, err)
			}
			continue
		}
		ok, isBool := out.(types.Bool)
		if !isBool {
			if firstErr == nil {
				firstErr = fmt.Errorf("match condition %q did not evaluate to a bool", c.name)
			}
			continue
		}
		if !ok {
			return false, nil
		}
	}
	return firstErr == nil, firstErr
}

// mutate evaluates mutation i (and the variables, against the object as
// mutated so far) and applies its result.
func (r *run) mutate(inv invocation, i int, param map[string]any) error {
	act, err := r.activation(param)
	if err != nil {
		return err
	}
	vars := act[matching.VarVariables].(map[string]any)
	for _, v := range inv.cp.variables {
		out, _, err := v.prg.Eval(act)
		if err != nil {
			return fmt.Errorf("variable %q resulted in error: %w", v.name, err)
		}
		vars[v.name] = out
	}
	m := inv.cp.mutations[i]
	out, _, err := m.prg.Eval(act)
	if err != nil {
		return fmt.Errorf("expression '%s' resulted in error: %w", m.expr, err)
	}
	switch m.patchType {
	case arv1.PatchTypeApplyConfiguration:
		patch, err := jsonOf(out)
		if err != nil {
			return fmt.Errorf("ApplyConfiguration: %w", err)
		}
		pm, ok := patch.(map[string]any)
		if !ok {
			return fmt.Errorf("ApplyConfiguration: must evaluate to Object but got %s", out.Type())
		}
		merged, err := applyConfiguration(r.p.typeConverter(), r.obj, pm)
		if err != nil {
			return err
		}
		r.obj = merged
	case arv1.PatchTypeJSONPatch:
		patch, err := jsonOf(out)
		if err != nil {
			return fmt.Errorf("JSONPatch: %w", err)
		}
		ops, ok := patch.([]any)
		if !ok {
			return fmt.Errorf("JSONPatch: must evaluate to list(JSONPatch) but got %s", out.Type())
		}
		patched, err := applyJSONPatch(r.obj, ops)
		if err != nil {
			return err
		}
		r.obj = patched
	}
	return nil
}

// decodeJSON decodes b with integers as int64.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func jsonOf(v ref.Val) (any, error) { return toJSON(v) }

// writeBack stores the mutated object into a.Object in place, decoded
// as the object's type and defaulted.
func (p *Plugin) writeBack(a *admission.Attributes, obj map[string]any) error {
	gvk := a.Object.GetObjectKind().GroupVersionKind()
	if u, ok := a.Object.(*unstructured.Unstructured); ok {
		u.Object = obj
		u.SetGroupVersionKind(gvk)
		return nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	fresh := reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(b, fresh); err != nil {
		return err
	}
	if p.opts.Default != nil {
		p.opts.Default(fresh)
	}
	fresh.GetObjectKind().SetGroupVersionKind(gvk)
	reflect.ValueOf(a.Object).Elem().Set(reflect.ValueOf(fresh).Elem())
	return nil
}

// failed turns the errors of policies with failurePolicy Fail into the
// request's refusal, as upstream's policy dispatcher: 403 with the first
// error's message (and reason, Invalid for evaluation errors), every
// error a cause.
func (r *run) failed(a *admission.Attributes) error {
	var st *apierrors.StatusError
	for _, e := range r.errs {
		if e.failurePolicy == arv1.Ignore {
			r.p.opts.Logger.Debug("mutating admission policy failed, ignored", "policy", e.policy, "binding", e.binding, "err", e.err)
			continue
		}
		msg := e.Error()
		if st == nil {
			st = apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New("admission request denied by policy"))
			st.ErrStatus.Message = msg
			if e.reason != "" {
				st.ErrStatus.Reason = e.reason
			}
		}
		st.ErrStatus.Details.Causes = append(st.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	}
	if st == nil {
		return nil
	}
	return st
}
