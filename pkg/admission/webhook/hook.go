package webhook

import (
	"fmt"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission/webhook/matchconditions"
)

// Hook is one webhook of a configuration, ready to match and call.
type Hook struct {
	// Name is the webhook's name; Configuration its configuration's.
	Name, Configuration string
	// Index is its position in its configuration.
	Index int

	ClientConfig      arv1.WebhookClientConfig
	Rules             []arv1.RuleWithOperations
	FailurePolicy     arv1.FailurePolicyType
	MatchPolicy       arv1.MatchPolicyType
	NamespaceSelector labels.Selector
	ObjectSelector    labels.Selector
	SideEffects       arv1.SideEffectClass
	TimeoutSeconds    int32
	ReviewVersions    []string
	Reinvoke          bool // reinvocationPolicy IfNeeded
	MatchConditions   []matchconditions.Condition
	// compileErr is set when the webhook's selectors or match conditions
	// do not compile (a stored object validation would now refuse); a call
	// then fails as a call failure, subject to the failure policy.
	compileErr error
	// key identifies the client config (configuration, webhook, version).
	key string
}

// CompileMutating returns the webhooks of a MutatingWebhookConfiguration.
func CompileMutating(obj runtime.Object) []*Hook {
	c, ok := obj.(*arv1.MutatingWebhookConfiguration)
	if !ok {
		return nil
	}
	out := make([]*Hook, 0, len(c.Webhooks))
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		h := newHook(c.ObjectMeta, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions)
		h.Reinvoke = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == arv1.IfNeededReinvocationPolicy
		out = append(out, h)
	}
	return out
}

// CompileValidating returns the webhooks of a
// ValidatingWebhookConfiguration.
func CompileValidating(obj runtime.Object) []*Hook {
	c, ok := obj.(*arv1.ValidatingWebhookConfiguration)
	if !ok {
		return nil
	}
	out := make([]*Hook, 0, len(c.Webhooks))
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		out = append(out, newHook(c.ObjectMeta, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions))
	}
	return out
}

func newHook(m metav1.ObjectMeta, i int, name string, cc arv1.WebhookClientConfig, rules []arv1.RuleWithOperations,
	fp *arv1.FailurePolicyType, mp *arv1.MatchPolicyType, nsSel, objSel *metav1.LabelSelector, se *arv1.SideEffectClass,
	timeout *int32, versions []string, conds []arv1.MatchCondition) *Hook {
	// Stored objects are defaulted on read; the fallbacks are the same
	// defaults, for objects built in-process.
	h := &Hook{
		Name: name, Configuration: m.Name, Index: i,
		ClientConfig: cc, Rules: rules,
		FailurePolicy: arv1.Fail, MatchPolicy: arv1.Equivalent, SideEffects: arv1.SideEffectClassUnknown, TimeoutSeconds: 10,
		ReviewVersions: versions,
		key:            fmt.Sprintf("%s/%d/%s/%s", m.UID, i, m.ResourceVersion, name),
	}
	if fp != nil {
		h.FailurePolicy = *fp
	}
	if mp != nil {
		h.MatchPolicy = *mp
	}
	if se != nil {
		h.SideEffects = *se
	}
	if timeout != nil {
		h.TimeoutSeconds = *timeout
	}
	var err error
	if h.NamespaceSelector, err = selector(nsSel); err != nil {
		h.compileErr = fmt.Errorf("invalid namespaceSelector: %w", err)
	}
	if h.ObjectSelector, err = selector(objSel); err != nil && h.compileErr == nil {
		h.compileErr = fmt.Errorf("invalid objectSelector: %w", err)
	}
	for _, c := range conds {
		prg, err := matchconditions.Compile(c.Expression)
		if err != nil {
			if h.compileErr == nil {
				h.compileErr = fmt.Errorf("compilation failed for matchCondition %q: %w", c.Name, err)
			}
			continue
		}
		h.MatchConditions = append(h.MatchConditions, matchconditions.Condition{Name: c.Name, Program: prg})
	}
	return h
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}
