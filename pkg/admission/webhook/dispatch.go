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

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/configsource"
	"github.com/kapi-dev/kapi/pkg/admission/webhook/matchconditions"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
)

// Options are what a dispatcher needs besides its configurations.
type Options struct {
	// NamespaceLabels reads a namespace's labels (namespaceSelector).
	NamespaceLabels NamespaceLabels
	// ServiceResolver resolves clientConfig.service references.
	ServiceResolver serviceresolver.EndpointResolver
	// Default defaults an object decoded from a patched one (nil: none).
	Default func(runtime.Object)
	Metrics *Metrics
	Logger  *slog.Logger
}

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
	return &Dispatcher{source: source, opts: opts, clients: clients{resolver: opts.ServiceResolver}}
}

// Metric types, as upstream labels them.
const (
	typeAdmit    = "admit"
	typeValidate = "validating"
)

// relevant returns the webhooks that match a, in order; an error denies.
func (d *Dispatcher) relevant(ctx context.Context, a *admission.Attributes, in func() (*reviewInput, error)) ([]*Hook, error) {
	if exempt(a.Resource.GroupResource()) {
		return nil, nil
	}
	hooks, err := d.source.Items(ctx)
	if err != nil {
		return nil, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	var out []*Hook
	for _, h := range hooks {
		ok, err := d.matches(ctx, h, a, in)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, h)
		}
	}
	return out, nil
}

func (d *Dispatcher) matches(ctx context.Context, h *Hook, a *admission.Attributes, in func() (*reviewInput, error)) (bool, error) {
	ruled := false
	for i := range h.Rules {
		if ruleMatches(&h.Rules[i], a, a.Resource) {
			ruled = true
			break
		}
	}
	if !ruled {
		return false, nil
	}
	ok, err := namespaceMatches(ctx, h, a, d.opts.NamespaceLabels)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, err
		}
		return false, apierrors.NewInternalError(err)
	}
	if !ok || !objectMatches(h, a) {
		return false, nil
	}
	if len(h.MatchConditions) == 0 {
		return true, nil
	}
	rin, err := in()
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	matched, _, err := matchconditions.Match(h.MatchConditions, matchconditions.Vars{Object: rin.objMap, OldObject: rin.oldMap, Request: rin.celRequest()})
	if err != nil {
		// Evaluation errors follow the failure policy, as upstream.
		if h.FailurePolicy == arv1.Ignore {
			return false, nil
		}
		return false, apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: failed to evaluate match condition: %w", h.Name, err))
	}
	return matched, nil
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

// inputOnce builds the review input on first use.
func inputOnce(a *admission.Attributes) func() (*reviewInput, error) {
	var (
		once sync.Once
		in   *reviewInput
		err  error
	)
	return func() (*reviewInput, error) {
		once.Do(func() { in, err = newReviewInput(a) })
		return in, err
	}
}

// Validate calls the matching validating webhooks in parallel; the first
// refusal in webhook order wins.
func (d *Dispatcher) Validate(ctx context.Context, a admission.Attributes) error {
	in := inputOnce(&a)
	hooks, err := d.relevant(ctx, &a, in)
	if err != nil || len(hooks) == 0 {
		return err
	}
	rin, err := in()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := make([]error, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		if errs[i] = dryRunRefused(h, &a); errs[i] != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.validateOne(ctx, h, &a, rin)
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
	in := inputOnce(&a)
	hooks, err := d.relevant(ctx, &a, in)
	if err != nil || len(hooks) == 0 {
		return err
	}
	ranBeforeChange := map[*Hook]bool{}
	var ran []*Hook
	for round := 0; round < 2; round++ {
		for _, h := range hooks {
			if round == 1 && !ranBeforeChange[h] {
				continue
			}
			changed, err := d.admitOne(ctx, h, &a, round)
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

func (d *Dispatcher) admitOne(ctx context.Context, h *Hook, a *admission.Attributes, round int) (bool, error) {
	if err := dryRunRefused(h, a); err != nil {
		return false, err
	}
	// The object may have changed: the review carries the current one.
	in, err := newReviewInput(a)
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
		changed, err = d.applyPatch(a, in.object, resp.patch)
		if err != nil {
			return false, d.callFailed(h, typeAdmit, op, &callError{h.Name, err}, start)
		}
	}
	d.opts.Metrics.observe(h.Name, typeAdmit, op, false, http.StatusOK, time.Since(start))
	ann, _ := json.Marshal(map[string]any{"configuration": h.Configuration, "webhook": h.Name, "mutated": changed})
	audit.AddAnnotation(ctx, fmt.Sprintf("mutation.webhook.admission.k8s.io/round_%d_index_%d", round, h.Index), string(ann))
	return changed, nil
}

// applyPatch applies a JSON patch to the object (as the review sent it)
// and stores the result into a.Object in place, defaulted as a decoded
// object is. It reports whether the object changed.
func (d *Dispatcher) applyPatch(a *admission.Attributes, original, patch []byte) (bool, error) {
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
	fresh := reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(runtime.Object)
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
