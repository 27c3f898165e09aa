package admissionregistrationv1

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// RegisterDefaults registers the covering defaulters of the webhook
// configurations and their lists on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&arv1.MutatingWebhookConfiguration{}, func(obj any) {
		SetObjectDefaults_MutatingWebhookConfiguration(obj.(*arv1.MutatingWebhookConfiguration))
	})
	s.AddTypeDefaultingFunc(&arv1.MutatingWebhookConfigurationList{}, func(obj any) {
		l := obj.(*arv1.MutatingWebhookConfigurationList)
		for i := range l.Items {
			SetObjectDefaults_MutatingWebhookConfiguration(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&arv1.ValidatingWebhookConfiguration{}, func(obj any) {
		SetObjectDefaults_ValidatingWebhookConfiguration(obj.(*arv1.ValidatingWebhookConfiguration))
	})
	s.AddTypeDefaultingFunc(&arv1.ValidatingWebhookConfigurationList{}, func(obj any) {
		l := obj.(*arv1.ValidatingWebhookConfigurationList)
		for i := range l.Items {
			SetObjectDefaults_ValidatingWebhookConfiguration(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&arv1.ValidatingAdmissionPolicy{}, func(obj any) {
		SetObjectDefaults_ValidatingAdmissionPolicy(obj.(*arv1.ValidatingAdmissionPolicy))
	})
	s.AddTypeDefaultingFunc(&arv1.ValidatingAdmissionPolicyList{}, func(obj any) {
		l := obj.(*arv1.ValidatingAdmissionPolicyList)
		for i := range l.Items {
			SetObjectDefaults_ValidatingAdmissionPolicy(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&arv1.ValidatingAdmissionPolicyBinding{}, func(obj any) {
		SetObjectDefaults_ValidatingAdmissionPolicyBinding(obj.(*arv1.ValidatingAdmissionPolicyBinding))
	})
	s.AddTypeDefaultingFunc(&arv1.ValidatingAdmissionPolicyBindingList{}, func(obj any) {
		l := obj.(*arv1.ValidatingAdmissionPolicyBindingList)
		for i := range l.Items {
			SetObjectDefaults_ValidatingAdmissionPolicyBinding(&l.Items[i])
		}
	})
	registerMutatingPolicyDefaults(s)
	return nil
}

// SetObjectDefaults_ValidatingAdmissionPolicy: failurePolicy Fail, and
// the match constraints' defaults.
func SetObjectDefaults_ValidatingAdmissionPolicy(p *arv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(arv1.Fail)
	}
	if p.Spec.MatchConstraints != nil {
		SetDefaults_MatchResources(p.Spec.MatchConstraints)
	}
}

// SetObjectDefaults_ValidatingAdmissionPolicyBinding: the match
// resources' defaults.
func SetObjectDefaults_ValidatingAdmissionPolicyBinding(b *arv1.ValidatingAdmissionPolicyBinding) {
	if b.Spec.MatchResources != nil {
		SetDefaults_MatchResources(b.Spec.MatchResources)
	}
}

// SetDefaults_MatchResources: matchPolicy Equivalent, empty (match-all)
// selectors, rule scope "*".
func SetDefaults_MatchResources(m *arv1.MatchResources) {
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(arv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		SetDefaults_Rule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		SetDefaults_Rule(&m.ExcludeResourceRules[i].Rule)
	}
}

// SetObjectDefaults_MutatingWebhookConfiguration defaults every webhook,
// its rules and its service reference.
func SetObjectDefaults_MutatingWebhookConfiguration(c *arv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		SetDefaults_MutatingWebhook(w)
		setClientConfigDefaults(&w.ClientConfig)
		for j := range w.Rules {
			SetDefaults_Rule(&w.Rules[j].Rule)
		}
	}
}

// SetObjectDefaults_ValidatingWebhookConfiguration defaults every webhook,
// its rules and its service reference.
func SetObjectDefaults_ValidatingWebhookConfiguration(c *arv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		SetDefaults_ValidatingWebhook(w)
		setClientConfigDefaults(&w.ClientConfig)
		for j := range w.Rules {
			SetDefaults_Rule(&w.Rules[j].Rule)
		}
	}
}

// SetDefaults_ValidatingWebhook: failurePolicy Fail, matchPolicy
// Equivalent, empty (match-all) namespace and object selectors,
// timeoutSeconds 10. sideEffects and admissionReviewVersions have no
// default in v1 (they are required).
func SetDefaults_ValidatingWebhook(w *arv1.ValidatingWebhook) {
	setWebhookDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
}

// SetDefaults_MutatingWebhook: as [SetDefaults_ValidatingWebhook], and
// reinvocationPolicy Never.
func SetDefaults_MutatingWebhook(w *arv1.MutatingWebhook) {
	setWebhookDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
	if w.ReinvocationPolicy == nil {
		w.ReinvocationPolicy = ptr.To(arv1.NeverReinvocationPolicy)
	}
}

func setWebhookDefaults(fp **arv1.FailurePolicyType, mp **arv1.MatchPolicyType, ns, obj **metav1.LabelSelector, timeout **int32) {
	if *fp == nil {
		*fp = ptr.To(arv1.Fail)
	}
	if *mp == nil {
		*mp = ptr.To(arv1.Equivalent)
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
}

// SetDefaults_Rule: scope "*".
func SetDefaults_Rule(r *arv1.Rule) {
	if r.Scope == nil {
		r.Scope = ptr.To(arv1.AllScopes)
	}
}

// setClientConfigDefaults: a service reference's port is 443.
func setClientConfigDefaults(c *arv1.WebhookClientConfig) {
	if c.Service != nil && c.Service.Port == nil {
		c.Service.Port = ptr.To[int32](443)
	}
}
