package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	"github.com/kapi-dev/kapi/pkg/admission/configsource"
	"github.com/kapi-dev/kapi/pkg/admission/webhook/matchconditions"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// Options are what a dispatcher needs besides its configurations.
type Options struct {
	// NamespaceLabels reads a namespace's labels (namespaceSelector).
	NamespaceLabels NamespaceLabels
	// ServiceResolver resolves clientConfig.service references.
	ServiceResolver serviceresolver.EndpointResolver
	// Default defaults an object decoded from a patched one (nil: none).
	Default func(runtime.Object)
	// Equivalents returns the other group-versions a resource is served
	// as (the same objects), for matchPolicy Equivalent; nil: none.
	Equivalents func(schema.GroupVersionResource) []Equivalent
	// Convert converts an object to another version of its kind, a
	// built-in one or a custom resource (required with Equivalents).
	Convert func(ctx context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
	// Authorizer answers matchConditions' authorizer checks for the
	// request's user (nil: expressions using authorizer fail to evaluate).
	Authorizer authorizer.Authorizer
	Metrics    *Metrics
	// X509 counts calls to webhooks whose certificates have no SAN or a
	// SHA-1 signature (the server's apiserver_webhooks_x509_* counters,
	// shared by all its webhook clients); nil: not counted.
	X509   *x509metrics.Counters
	Logger *slog.Logger
}

// Equivalent is another group-version-resource (and its kind) that
// serves the same objects as the one requested.
type Equivalent = admission.Equivalent

// invocation is a webhook to call, and the resource and kind it is sent
// (the request's own, or an equivalent one it matched through
// matchPolicy Equivalent: the objects are then converted).
type invocation struct {
	h        *Hook
	resource schema.GroupVersionResource
	kind     schema.GroupVersionKind
}

func (inv invocation) converted(a *admission.Attributes) bool { return inv.kind != a.Kind }

// Dispatcher calls the webhooks of one source.
type Dispatcher struct {
	source  *configsource.Source[*Hook]
	opts    Options
	clients clients
}

// NewDispatcher returns a dispatcher of source's webhooks.
func NewDispatcher(source *configsource.Source[*Hook], opts Options) *Dispatcher {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Dispatcher{source: source, opts: opts, clients: clients{resolver: opts.ServiceResolver, x509: opts.X509}}
}

// Metric types, as upstream labels them.
const (
	typeAdmit    = "admit"
	typeValidate = "validating"
)

// hooks are the configured webhooks that may concern a: none for the
// admission configuration resources themselves (as upstream).
func (d *Dispatcher) hooks(ctx context.Context, a *admission.Attributes) ([]*Hook, error) {
	if exempt(a.Resource.GroupResource()) {
		return nil, nil
	}
	hooks, err := d.source.Items(ctx)
	if err != nil {
		return nil, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	return hooks, nil
}

// relevant returns the webhooks that match a, in order; an error denies.
func (d *Dispatcher) relevant(ctx context.Context, a *admission.Attributes, hooks []*Hook, in func(invocation) (*reviewInput, error)) ([]invocation, error) {
	var out []invocation
	for _, h := range hooks {
		inv, ok, err := d.matches(ctx, h, a, in)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, inv)
		}
	}
	return out, nil
}

// ruleMatch finds what h is called for: the request's resource if a rule
// matches it, else (matchPolicy Equivalent) the first equivalent resource
// a rule matches.
func (d *Dispatcher) ruleMatch(h *Hook, a *admission.Attributes) (invocation, bool) {
	for i := range h.Rules {
		if ruleMatches(&h.Rules[i], a, a.Resource) {
			return invocation{h, a.Resource, a.Kind}, true
		}
	}
	if h.MatchPolicy != arv1.Equivalent || d.opts.Equivalents == nil || d.opts.Convert == nil {
		return invocation{}, false
	}
	// Earlier rules first, as upstream's ShouldCallHook.
	eqs := admission.Equivalents(d.opts.Equivalents, a)
	for i := range h.Rules {
		for _, eq := range eqs {
			if eq.Resource != a.Resource && ruleMatches(&h.Rules[i], a, eq.Resource) {
				return invocation{h, eq.Resource, eq.Kind}, true
			}
		}
	}
	return invocation{}, false
}

func (d *Dispatcher) matches(ctx context.Context, h *Hook, a *admission.Attributes, in func(invocation) (*reviewInput, error)) (invocation, bool, error) {
	inv, ruled := d.ruleMatch(h, a)
	if !ruled {
		return inv, false, nil
	}
	ok, err := namespaceMatches(ctx, h, a, d.opts.NamespaceLabels)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return inv, false, err
		}
		return inv, false, apierrors.NewInternalError(err)
	}
	if !ok || !objectMatches(h, a) {
		return inv, false, nil
	}
	if len(h.MatchConditions) == 0 {
		return inv, true, nil
	}
	rin, err := in(inv)
	if err != nil {
		return inv, false, apierrors.NewInternalError(err)
	}
	authz := map[string]any{}
	celauthz.Bind(authz, ctx, d.opts.Authorizer, a)
	matched, _, err := matchconditions.Match(h.MatchConditions, matchconditions.Vars{Object: rin.objMap, OldObject: rin.oldMap, Request: rin.celRequest(), Authz: authz})
	if err != nil {
		// Evaluation errors follow the failure policy, as upstream.
		if h.FailurePolicy == arv1.Ignore {
			return inv, false, nil
		}
		return inv, false, apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: failed to evaluate match condition: %w", h.Name, err))
	}
	return inv, matched, nil
}

// callError is a failure to call a webhook or understand its answer;
// the failure policy decides.
type callError struct {
	hook   string
	reason error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.hook, e.reason)
}

// call sends one review and returns the checked answer.
func (d *Dispatcher) call(ctx context.Context, h *Hook, in *reviewInput) (*response, *request, error) {
	if h.compileErr != nil {
		return nil, nil, &callError{h.Name, h.compileErr}
	}
	version, err := reviewVersion(h)
	if err != nil {
		return nil, nil, &callError{h.Name, err}
	}
	hc, err := d.clients.get(h)
	if err != nil {
		return nil, nil, &callError{h.Name, fmt.Errorf("could not get REST client: %w", err)}
	}
	req, err := in.build(version)
	if err != nil {
		return nil, nil, &callError{h.Name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	body, err := hc.post(ctx, req.body, time.Duration(h.TimeoutSeconds)*time.Second)
	if err != nil {
		return nil, req, &callError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	resp, err := parseResponse(req, body)
	if err != nil {
		return nil, req, &callError{h.Name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	for _, w := range resp.warnings {
		warning.AddWarning(ctx, w)
	}
	for k, v := range resp.auditAnnotations {
		audit.AddAnnotation(ctx, h.Name+"/"+k, v)
	}
	return resp, req, nil
}

// denied is upstream's ToStatusErr: the webhook's status, at least 400,
// its message prefixed with who denied.
func denied(name string, result *metav1.Status) *apierrors.StatusError {
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = by + ": " + st.Message
	case st.Reason != "":
		st.Message = by + ": " + string(st.Reason)
	default:
		st.Message = by + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// dryRunRefused: webhooks that may have side effects never see dry-run
// requests.
func dryRunRefused(h *Hook, a *admission.Attributes) error {
	if a.DryRun && h.SideEffects != arv1.SideEffectClassNone && h.SideEffects != arv1.SideEffectClassNoneOnDryRun {
		return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.Name))
	}
	return nil
}

// inputs builds the review input of each kind (the request's, or an
// equivalent one) on first use.
func (d *Dispatcher) inputs(ctx context.Context, a *admission.Attributes) func(invocation) (*reviewInput, error) {
	var mu sync.Mutex
	byKind := map[schema.GroupVersionKind]*reviewInput{}
	return func(inv invocation) (*reviewInput, error) {
		mu.Lock()
		defer mu.Unlock()
		if in, ok := byKind[inv.kind]; ok {
			return in, nil
		}
		in, err := d.newInput(ctx, a, inv)
		if err != nil {
			return nil, err
		}
		byKind[inv.kind] = in
		return in, nil
	}
}

// newInput is the review input of inv: a's objects, converted to inv's
// kind when it is an equivalent one.
func (d *Dispatcher) newInput(ctx context.Context, a *admission.Attributes, inv invocation) (*reviewInput, error) {
	if !inv.converted(a) {
		return newReviewInput(a)
	}
	conv := *a
	conv.Resource, conv.Kind = inv.resource, inv.kind
	var err error
	if a.Object != nil {
		if conv.Object, err = d.opts.Convert(ctx, a.Object, inv.kind); err != nil {
			return nil, fmt.Errorf("convert to %s: %w", inv.kind, err)
		}
	}
	if a.OldObject != nil {
		if conv.OldObject, err = d.opts.Convert(ctx, a.OldObject, inv.kind); err != nil {
			return nil, fmt.Errorf("convert to %s: %w", inv.kind, err)
		}
	}
	in, err := newReviewInput(&conv)
	if err != nil {
		return nil, err
	}
	in.requestKind, in.requestResource = &a.Kind, &a.Resource
	in.sent = conv.Object
	return in, nil
}

// Validate calls the matching validating webhooks in parallel; the first
// refusal in webhook order wins.
func (d *Dispatcher) Validate(ctx context.Context, a admission.Attributes) error {
	hooks, err := d.hooks(ctx, &a)
	if err != nil || len(hooks) == 0 {
		return err
	}
	return d.validate(ctx, a, hooks)
}

// validate is Validate once there are hooks. It takes its own copy of a,
// whose address the calls keep: Validate's copy stays on the stack for
// the requests no webhook can concern.
func (d *Dispatcher) validate(ctx context.Context, a admission.Attributes, hooks []*Hook) error {
	in := d.inputs(ctx, &a)
	invs, err := d.relevant(ctx, &a, hooks, in)
	if err != nil || len(invs) == 0 {
		return err
	}
	errs := make([]error, len(invs))
	var wg sync.WaitGroup
	for i, inv := range invs {
		if errs[i] = dryRunRefused(inv.h, &a); errs[i] != nil {
			continue
		}
		rin, err := in(inv)
		if err != nil {
			errs[i] = apierrors.NewInternalError(err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.validateOne(ctx, inv.h, &a, rin)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *Dispatcher) validateOne(ctx context.Context, h *Hook, a *admission.Attributes, in *reviewInput) error {
	start := time.Now()
	op := string(a.Operation)
	resp, _, err := d.call(ctx, h, in)
	if err != nil {
		return d.callFailed(h, typeValidate, op, err, start)
	}
	if len(resp.patch) > 0 {
		// Upstream refuses patches from validating webhooks.
		return d.callFailed(h, typeValidate, op, &callError{h.Name, errors.New("received invalid webhook response: validating webhooks may not return patches")}, start)
	}
	if !resp.allowed {
		st := denied(h.Name, resp.result)
		d.opts.Metrics.observe(h.Name, typeValidate, op, true, int(st.ErrStatus.Code), time.Since(start))
		d.opts.Metrics.reject(h.Name, typeValidate, op, errNone, int(st.ErrStatus.Code))
		return st
	}
	d.opts.Metrics.observe(h.Name, typeValidate, op, false, http.StatusOK, time.Since(start))
	return nil
}

// callFailed applies the failure policy to a call failure: Ignore admits
// (fail open, counted), Fail refuses with a 500.
func (d *Dispatcher) callFailed(h *Hook, typ, op string, err error, start time.Time) error {
	var ce *callError
	if !errors.As(err, &ce) {
		d.opts.Metrics.reject(h.Name, typ, op, errInternal, 0)
		return err
	}
	if h.FailurePolicy == arv1.Ignore {
		d.opts.Logger.Warn("failed calling webhook, failing open", "webhook", h.Name, "err", err)
		d.opts.Metrics.observe(h.Name, typ, op, false, 0, time.Since(start))
		d.opts.Metrics.failedOpen(h.Name, typ)
		return nil
	}
	d.opts.Logger.Warn("failed calling webhook, failing closed", "webhook", h.Name, "err", err)
	d.opts.Metrics.observe(h.Name, typ, op, true, 0, time.Since(start))
	d.opts.Metrics.reject(h.Name, typ, op, errCalling, 0)
	return apierrors.NewInternalError(err)
}

// Admit calls the matching mutating webhooks in order, applying each
// patch to a.Object before the next call. Webhooks with
// reinvocationPolicy IfNeeded are called once more, in order, when a
// webhook after them changed the object (upstream reinvokes them when any
// later mutating plugin did; MutatingAdmissionWebhook is the last mutating
// plugin of the default chain but for policies, so only webhooks are
// considered here).
func (d *Dispatcher) Admit(ctx context.Context, a admission.Attributes) error {
	hooks, err := d.hooks(ctx, &a)
	if err != nil || len(hooks) == 0 {
		return err
	}
	return d.admit(ctx, a, hooks)
}

// admit is Admit once there are hooks; see validate.
func (d *Dispatcher) admit(ctx context.Context, a admission.Attributes, hooks []*Hook) error {
	invs, err := d.relevant(ctx, &a, hooks, d.inputs(ctx, &a))
	if err != nil || len(invs) == 0 {
		return err
	}
	ranBeforeChange := map[*Hook]bool{}
	var ran []*Hook
	for round := 0; round < 2; round++ {
		for _, inv := range invs {
			h := inv.h
			if round == 1 && !ranBeforeChange[h] {
				continue
			}
			changed, err := d.admitOne(ctx, inv, &a, round)
			if err != nil {
				return err
			}
			if changed && round == 0 {
				// Every IfNeeded webhook that ran before this change
				// (not the one that made it) is reinvoked.
				for _, r := range ran {
					if r.Reinvoke && r != h {
						ranBeforeChange[r] = true
					}
				}
			}
			ran = append(ran, h)
		}
		if len(ranBeforeChange) == 0 {
			return nil
		}
	}
	return nil
}

func (d *Dispatcher) admitOne(ctx context.Context, inv invocation, a *admission.Attributes, round int) (bool, error) {
	h := inv.h
	if err := dryRunRefused(h, a); err != nil {
		return false, err
	}
	// The object may have changed: the review carries the current one.
	in, err := d.newInput(ctx, a, inv)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	start := time.Now()
	op := string(a.Operation)
	resp, _, err := d.call(ctx, h, in)
	if err != nil {
		return false, d.callFailed(h, typeAdmit, op, err, start)
	}
	if !resp.allowed {
		st := denied(h.Name, resp.result)
		d.opts.Metrics.observe(h.Name, typeAdmit, op, true, int(st.ErrStatus.Code), time.Since(start))
		d.opts.Metrics.reject(h.Name, typeAdmit, op, errNone, int(st.ErrStatus.Code))
		return false, st
	}
	changed := false
	if len(resp.patch) > 0 && a.Object != nil {
		changed, err = d.applyPatch(ctx, a, in, resp.patch)
		if err != nil {
			return false, d.callFailed(h, typeAdmit, op, &callError{h.Name, err}, start)
		}
	}
	d.opts.Metrics.observe(h.Name, typeAdmit, op, false, http.StatusOK, time.Since(start))
	ann, _ := json.Marshal(map[string]any{"configuration": h.Configuration, "webhook": h.Name, "mutated": changed})
	audit.AddAnnotation(ctx, fmt.Sprintf("mutation.webhook.admission.k8s.io/round_%d_index_%d", round, h.Index), string(ann))
	return changed, nil
}

// applyPatch applies a JSON patch to the object as the review sent it
// (in another version when the webhook matched an equivalent resource)
// and stores the result into a.Object in place (converted back), defaulted
// as a decoded object is. It reports whether the object changed.
func (d *Dispatcher) applyPatch(ctx context.Context, a *admission.Attributes, in *reviewInput, patch []byte) (bool, error) {
	original := in.object
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return false, fmt.Errorf("received invalid webhook response: invalid JSON patch: %w", err)
	}
	patched, err := p.Apply(original)
	if err != nil {
		return false, fmt.Errorf("JSON patch could not be applied: %w", err)
	}
	if jsonEqual(original, patched) {
		return false, nil
	}
	gvk := a.Object.GetObjectKind().GroupVersionKind()
	sent := a.Object
	if in.sent != nil {
		sent = in.sent
	}
	fresh := reflect.New(reflect.TypeOf(sent).Elem()).Interface().(runtime.Object)
	if u, ok := fresh.(runtime.Unstructured); ok {
		m := map[string]any{}
		if err := json.Unmarshal(patched, &m); err != nil {
			return false, fmt.Errorf("decode patched object: %w", err)
		}
		u.SetUnstructuredContent(m)
	} else if err := json.Unmarshal(patched, fresh); err != nil {
		return false, fmt.Errorf("decode patched object: %w", err)
	}
	if d.opts.Default != nil {
		d.opts.Default(fresh)
	}
	if in.sent != nil {
		back, err := d.opts.Convert(ctx, fresh, a.Kind)
		if err != nil {
			return false, fmt.Errorf("convert the patched object back to %s: %w", a.Kind, err)
		}
		fresh = back
	}
	fresh.GetObjectKind().SetGroupVersionKind(gvk)
	reflect.ValueOf(a.Object).Elem().Set(reflect.ValueOf(fresh).Elem())
	return true, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
