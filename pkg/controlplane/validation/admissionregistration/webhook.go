package admissionregistration

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/admission/webhook/matchconditions"
)

// options are upstream's validationOptions: on update, rules the old
// object already broke are relaxed so it can still be changed.
type options struct {
	ignoreMatchConditions      bool
	requireNoSideEffects       bool
	requireRecognizedVersion   bool
	requireUniqueNames         bool
	allowInvalidLabelSelectors bool
}

var createOptions = options{requireNoSideEffects: true, requireRecognizedVersion: true, requireUniqueNames: true}

// hook is what the two webhook kinds share.
type hook struct {
	name               string
	clientConfig       arv1.WebhookClientConfig
	rules              []arv1.RuleWithOperations
	failurePolicy      *arv1.FailurePolicyType
	matchPolicy        *arv1.MatchPolicyType
	namespaceSelector  labelSelector
	objectSelector     labelSelector
	sideEffects        *arv1.SideEffectClass
	timeoutSeconds     *int32
	reviewVersions     []string
	matchConditions    []arv1.MatchCondition
	reinvocationPolicy *arv1.ReinvocationPolicyType
}

type labelSelector = *metav1.LabelSelector

func mutatingHooks(ws []arv1.MutatingWebhook) []hook {
	out := make([]hook, len(ws))
	for i, w := range ws {
		out[i] = hook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions, w.ReinvocationPolicy}
	}
	return out
}

func validatingHooks(ws []arv1.ValidatingWebhook) []hook {
	out := make([]hook, len(ws))
	for i, w := range ws {
		out[i] = hook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions, nil}
	}
	return out
}

// ValidateMutatingWebhookConfiguration checks a new configuration.
func ValidateMutatingWebhookConfiguration(c *arv1.MutatingWebhookConfiguration) field.ErrorList {
	return validateHooks(mutatingHooks(c.Webhooks), createOptions)
}

// ValidateValidatingWebhookConfiguration checks a new configuration.
func ValidateValidatingWebhookConfiguration(c *arv1.ValidatingWebhookConfiguration) field.ErrorList {
	return validateHooks(validatingHooks(c.Webhooks), createOptions)
}

// ValidateMutatingWebhookConfigurationUpdate checks an update.
func ValidateMutatingWebhookConfigurationUpdate(c, old *arv1.MutatingWebhookConfiguration) field.ErrorList {
	hooks, oldHooks := mutatingHooks(c.Webhooks), mutatingHooks(old.Webhooks)
	return validateHooks(hooks, updateOptions(hooks, oldHooks))
}

// ValidateValidatingWebhookConfigurationUpdate checks an update.
func ValidateValidatingWebhookConfigurationUpdate(c, old *arv1.ValidatingWebhookConfiguration) field.ErrorList {
	hooks, oldHooks := validatingHooks(c.Webhooks), validatingHooks(old.Webhooks)
	return validateHooks(hooks, updateOptions(hooks, oldHooks))
}

// updateOptions relaxes what the old webhooks already broke, as upstream's
// Validate*WebhookConfigurationUpdate do; unchanged match conditions are
// not recompiled.
func updateOptions(hooks, old []hook) options {
	o := options{requireNoSideEffects: true, requireRecognizedVersion: true, requireUniqueNames: true, ignoreMatchConditions: len(hooks) == len(old)}
	names := map[string]bool{}
	for i, h := range old {
		if h.sideEffects == nil || !slices.Contains(noSideEffectClasses, string(*h.sideEffects)) {
			o.requireNoSideEffects = false
		}
		if len(h.reviewVersions) > 0 && !slices.ContainsFunc(h.reviewVersions, isAcceptedReviewVersion) {
			o.requireRecognizedVersion = false
		}
		if names[h.name] {
			o.requireUniqueNames = false
		}
		names[h.name] = true
		strict := metav1validation.LabelSelectorValidationOptions{}
		if h.namespaceSelector != nil && len(metav1validation.ValidateLabelSelector(h.namespaceSelector, strict, nil)) > 0 ||
			h.objectSelector != nil && len(metav1validation.ValidateLabelSelector(h.objectSelector, strict, nil)) > 0 {
			o.allowInvalidLabelSelectors = true
		}
		if o.ignoreMatchConditions && !slices.Equal(hooks[i].matchConditions, h.matchConditions) {
			o.ignoreMatchConditions = false
		}
	}
	return o
}

// acceptedReviewVersions are the AdmissionReview versions the server
// sends, in upstream's order (its message lists them so).
var acceptedReviewVersions = []string{"v1", "v1beta1"}

func isAcceptedReviewVersion(v string) bool { return slices.Contains(acceptedReviewVersions, v) }

// Sorted as upstream's sets.String.List().
var (
	failurePolicies     = []string{"Fail", "Ignore"}
	matchPolicies       = []string{"Equivalent", "Exact"}
	allSideEffects      = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectClasses = []string{"None", "NoneOnDryRun"}
	operations          = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	reinvocation        = []string{"IfNeeded", "Never"}
	scopes              = []string{"*", "Cluster", "Namespaced"}
)

func validateHooks(hooks []hook, o options) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateHook(&hooks[i], o, p)...)
		errs = append(errs, validateReviewVersions(hooks[i].reviewVersions, o.requireRecognizedVersion, p.Child("admissionReviewVersions"))...)
		if o.requireUniqueNames && hooks[i].name != "" {
			if names[hooks[i].name] {
				errs = append(errs, field.Duplicate(p.Child("name"), hooks[i].name))
			}
			names[hooks[i].name] = true
		}
	}
	return errs
}

func validateHook(h *hook, o options, p *field.Path) field.ErrorList {
	errs := utilvalidation.IsFullyQualifiedName(p.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], p.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil && !slices.Contains(failurePolicies, string(*h.failurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *h.failurePolicy, failurePolicies))
	}
	if h.matchPolicy != nil && !slices.Contains(matchPolicies, string(*h.matchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *h.matchPolicy, matchPolicies))
	}
	allowed := allSideEffects
	if o.requireNoSideEffects {
		allowed = noSideEffectClasses
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(allowed, ", "))))
	} else if !slices.Contains(allowed, string(*h.sideEffects)) {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *h.sideEffects, allowed))
	}
	if h.timeoutSeconds != nil && (*h.timeoutSeconds > 30 || *h.timeoutSeconds < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *h.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	sel := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelSelectors}
	if h.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.namespaceSelector, sel, p.Child("namespaceSelector"))...)
	}
	if h.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.objectSelector, sel, p.Child("objectSelector"))...)
	}
	if h.reinvocationPolicy != nil && !slices.Contains(reinvocation, string(*h.reinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *h.reinvocationPolicy, reinvocation))
	}
	cc := h.clientConfig
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(p.Child("clientConfig"), "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, ValidateWebhookURL(p.Child("clientConfig", "url"), *cc.URL)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, ValidateWebhookService(p.Child("clientConfig", "service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, port)...)
	}
	if !o.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(h.matchConditions, p.Child("matchConditions"))...)
	}
	return errs
}

func validateReviewVersions(versions []string, requireRecognized bool, p *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, fmt.Sprintf("must specify one of %v", strings.Join(acceptedReviewVersions, ", ")))}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	accepted := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		accepted = accepted || isAcceptedReviewVersion(v)
	}
	if requireRecognized && !accepted {
		errs = append(errs, field.Invalid(p, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedReviewVersions, ", "))))
	}
	return errs
}

func validateRuleWithOperations(r *arv1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, arv1.OperationAll) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(operations, string(op)) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), op, operations))
		}
	}
	return append(errs, validateRule(&r.Rule, p)...)
}

func validateRule(r *arv1.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !slices.Contains(scopes, string(*r.Scope)) {
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, scopes))
	}
	return errs
}

// validateResources: "x", "x/y", "x/*", "*/y", "*", "*/*" as upstream
// allows them together.
func validateResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	wildSub := map[string]bool{} // x/*
	wildRes := map[string]bool{} // */x
	double, single, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		double = double || rs == "*/*"
		single = single || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plain = rs != "*"
			continue
		}
		if wildSub[res] {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildRes[sub] {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSub[res] = true
		}
		if res == "*" {
			wildRes[sub] = true
		}
	}
	if len(resources) > 1 && double {
		errs = append(errs, field.Invalid(p, resources, "if '*/*' is present, must not specify other resources"))
	}
	if single && plain {
		errs = append(errs, field.Invalid(p, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// ValidateWebhookURL checks a webhook URL as upstream's ValidateWebhookURL
// with forceHttps.
func ValidateWebhookURL(p *field.Path, s string) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(s)
	if err != nil {
		return field.ErrorList{field.Invalid(p, s, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// ValidateWebhookService checks a service reference as upstream's
// ValidateWebhookService.
func ValidateWebhookService(p *field.Path, name, namespace string, path *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "service name is required"))
	}
	if namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), "service namespace is required"))
	}
	if msgs := utilvalidation.IsValidPortNum(int(port)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if path == nil || *path == "/" {
		return errs
	}
	if !strings.HasPrefix(*path, "/") {
		return append(errs, field.Invalid(p.Child("path"), *path, "must start with a '/'"))
	}
	for i, step := range strings.Split((*path)[1:], "/") {
		if step == "" {
			errs = append(errs, field.Invalid(p.Child("path"), *path, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		if msgs := utilvalidation.IsDNS1123Subdomain(step); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("path"), *path, fmt.Sprintf("segment[%d]: %v", i, strings.Join(msgs, ", "))))
		}
	}
	return errs
}

func validateMatchConditions(conds []arv1.MatchCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > matchconditions.MaxConditions {
		errs = append(errs, field.TooMany(p, len(conds), matchconditions.MaxConditions))
	}
	names := map[string]bool{}
	for i, c := range conds {
		ip := p.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), c.Name, msg))
			}
			if names[c.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
			}
			names[c.Name] = true
		}
		if c.Expression == "" {
			errs = append(errs, field.Required(ip.Child("expression"), ""))
			continue
		}
		if _, err := matchconditions.Compile(c.Expression); err != nil {
			errs = append(errs, field.Invalid(ip.Child("expression"), c.Expression, "compilation failed: "+err.Error()))
		}
	}
	return errs
}
