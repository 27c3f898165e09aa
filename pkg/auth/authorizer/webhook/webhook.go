package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
)

// Config configures the authorizer.
type Config struct {
	// KubeconfigFile names the webhook service: its cluster's server is
	// the URL POSTed to, with the cluster's CA and the user's client
	// credentials.
	KubeconfigFile string
	// Version is "v1" (default) or "v1beta1".
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long answers are cached
	// (0: not cached).
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// Retries is how many times a failed call is retried (upstream
	// retries with backoff); RetryBackoff the first wait, doubled each
	// time.
	Retries      int
	RetryBackoff time.Duration
	// Timeout bounds one call (default 30s).
	Timeout time.Duration
	// MatchConditions are CEL expressions over `request` (the review's
	// spec) that must all be true for the webhook to be asked
	// (--authorization-config only).
	MatchConditions []string
	// FailurePolicyDeny returns Deny with a call's error (or a match
	// condition's), which stops the chain; by default the error comes
	// with no opinion and the next authorizer decides (failurePolicy
	// NoOpinion).
	FailurePolicyDeny bool
	// WrapTransport, if set, wraps the client's transport (kapi counts
	// calls to servers with deprecated certificates with it, as
	// upstream's webhook client does).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Authorizer asks the webhook.
type Authorizer struct {
	cfg     Config
	onError authorizer.Decision
	match   *matcher
	url     string
	client  *http.Client

	mu    sync.Mutex
	cache map[string]cached
	now   func() time.Time
}

type cached struct {
	decision authorizer.Decision
	reason   string
	expires  time.Time
}

var _ authorizer.Authorizer = (*Authorizer)(nil)

// New reads the kubeconfig and returns the authorizer.
func New(c Config) (*Authorizer, error) {
	switch c.Version {
	case "":
		c.Version = "v1"
	case "v1", "v1beta1":
	default:
		return nil, fmt.Errorf("webhook authorizer: unsupported version %q (v1 or v1beta1)", c.Version)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigFile)
	if err != nil {
		return nil, fmt.Errorf("webhook authorizer: %w", err)
	}
	if c.WrapTransport != nil {
		rc.Wrap(c.WrapTransport)
	}
	client, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("webhook authorizer: %w", err)
	}
	client.Timeout = c.Timeout
	if client.Timeout == 0 {
		client.Timeout = 30 * time.Second
	}
	m, err := compileMatchConditions(c.MatchConditions)
	if err != nil {
		return nil, fmt.Errorf("webhook authorizer: %w", err)
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = 500 * time.Millisecond
	}
	onError := authorizer.DecisionNoOpinion
	if c.FailurePolicyDeny {
		onError = authorizer.DecisionDeny
	}
	return &Authorizer{cfg: c, onError: onError, match: m, url: rc.Host, client: client, cache: map[string]cached{}, now: time.Now}, nil
}

// Authorize implements authorizer.Authorizer: allowed answers Allow,
// denied Deny, anything else no opinion, with the webhook's reason. A
// failed call is no opinion with the error (the filter then answers 500,
// as upstream).
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	spec := specOf(attrs)
	if ok, err := a.match.matches(spec); err != nil {
		return a.onError, "", fmt.Errorf("webhook authorizer: %w", err)
	} else if !ok {
		return authorizer.DecisionNoOpinion, "", nil
	}
	key, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	a.mu.Lock()
	if c, ok := a.cache[string(key)]; ok && a.now().Before(c.expires) {
		a.mu.Unlock()
		return c.decision, c.reason, nil
	}
	a.mu.Unlock()

	status, err := a.review(ctx, spec)
	if err != nil {
		return a.onError, "", fmt.Errorf("webhook authorizer: %w", err)
	}
	d, ttl := authorizer.DecisionNoOpinion, a.cfg.UnauthorizedTTL
	switch {
	case status.Allowed:
		d, ttl = authorizer.DecisionAllow, a.cfg.AuthorizedTTL
	case status.Denied:
		d = authorizer.DecisionDeny
	}
	if ttl > 0 {
		a.mu.Lock()
		a.cache[string(key)] = cached{decision: d, reason: status.Reason, expires: a.now().Add(ttl)}
		a.mu.Unlock()
	}
	return d, status.Reason, nil
}

func specOf(a authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if a.User != nil {
		spec.User, spec.UID, spec.Groups = a.User.Name, a.User.UID, a.User.Groups
		if len(a.User.Extra) > 0 {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
			for k, v := range a.User.Extra {
				spec.Extra[k] = v
			}
		}
	}
	if a.ResourceRequest {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace: a.Namespace, Verb: a.Verb, Group: a.APIGroup, Version: a.APIVersion,
			Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
		}
		// Selectors only narrow: whatever requirements parsed are sent,
		// even when a part did not (upstream's resourceAttributesFrom).
		if reqs := fieldSelectorRequirements(a.FieldSelector); len(reqs) > 0 {
			spec.ResourceAttributes.FieldSelector = &authorizationv1.FieldSelectorAttributes{Requirements: reqs}
		}
		if reqs := labelSelectorRequirements(a.LabelSelector); len(reqs) > 0 {
			spec.ResourceAttributes.LabelSelector = &authorizationv1.LabelSelectorAttributes{Requirements: reqs}
		}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.Path, Verb: a.Verb}
	}
	return spec
}

// fieldSelectorRequirements is a field selector in the review's form:
// = and == are In, != NotIn (one value each); other operators are left
// out, which only makes the check broader (requirements are ANDed).
func fieldSelectorRequirements(in fields.Requirements) []metav1.FieldSelectorRequirement {
	var out []metav1.FieldSelectorRequirement
	for _, r := range in {
		var op metav1.FieldSelectorOperator
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.FieldSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.FieldSelectorOpNotIn
		default:
			continue
		}
		out = append(out, metav1.FieldSelectorRequirement{Key: r.Field, Operator: op, Values: []string{r.Value}})
	}
	return out
}

// labelSelectorRequirements is fieldSelectorRequirements for labels,
// whose Exists and DoesNotExist are kept.
func labelSelectorRequirements(in labels.Requirements) []metav1.LabelSelectorRequirement {
	var out []metav1.LabelSelectorRequirement
	for _, r := range in {
		var op metav1.LabelSelectorOperator
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			op = metav1.LabelSelectorOpExists
		case selection.DoesNotExist:
			op = metav1.LabelSelectorOpDoesNotExist
		default:
			continue
		}
		req := metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op}
		if values := r.ValuesUnsorted(); len(values) > 0 {
			req.Values = values
		}
		out = append(out, req)
	}
	return out
}

// review POSTs the review (retrying failures) and returns its status.
func (a *Authorizer) review(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	body, err := a.encode(spec)
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	wait := a.cfg.RetryBackoff
	for attempt := 0; ; attempt++ {
		st, retriable, err := a.post(ctx, body)
		if err == nil || !retriable || attempt >= a.cfg.Retries {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (a *Authorizer) encode(spec authorizationv1.SubjectAccessReviewSpec) ([]byte, error) {
	if a.cfg.Version == "v1beta1" {
		b := authorizationv1beta1.SubjectAccessReview{Spec: authorizationv1beta1.SubjectAccessReviewSpec{
			User: spec.User, UID: spec.UID, Groups: spec.Groups,
		}}
		b.APIVersion, b.Kind = "authorization.k8s.io/v1beta1", "SubjectAccessReview"
		if len(spec.Extra) > 0 {
			b.Spec.Extra = map[string]authorizationv1beta1.ExtraValue{}
			for k, v := range spec.Extra {
				b.Spec.Extra[k] = authorizationv1beta1.ExtraValue(v)
			}
		}
		if r := spec.ResourceAttributes; r != nil {
			b.Spec.ResourceAttributes = &authorizationv1beta1.ResourceAttributes{Namespace: r.Namespace, Verb: r.Verb, Group: r.Group,
				Version: r.Version, Resource: r.Resource, Subresource: r.Subresource, Name: r.Name,
				FieldSelector: r.FieldSelector, LabelSelector: r.LabelSelector}
		}
		if n := spec.NonResourceAttributes; n != nil {
			b.Spec.NonResourceAttributes = &authorizationv1beta1.NonResourceAttributes{Path: n.Path, Verb: n.Verb}
		}
		return json.Marshal(&b)
	}
	r := authorizationv1.SubjectAccessReview{Spec: spec}
	r.APIVersion, r.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	return json.Marshal(&r)
}

// post sends one review; retriable reports a failure worth retrying
// (transport errors, 429 and 5xx).
func (a *Authorizer) post(ctx context.Context, body []byte) (authorizationv1.SubjectAccessReviewStatus, bool, error) {
	var st authorizationv1.SubjectAccessReviewStatus
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return st, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return st, true, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return st, true, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return st, resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
			fmt.Errorf("the webhook answered %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	// v1 and v1beta1 share the status's JSON.
	var out authorizationv1.SubjectAccessReview
	if err := json.Unmarshal(data, &out); err != nil {
		return st, false, fmt.Errorf("decode the webhook's answer: %w", err)
	}
	return out.Status, false, nil
}
