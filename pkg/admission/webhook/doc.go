// Package webhook is the machinery of the MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook admission plugins (sub-packages mutating and
// validating): it keeps the webhook configurations in memory, decides
// which webhooks a request matches (rules, scope, namespaceSelector,
// objectSelector, matchConditions), sends AdmissionReview v1 (or v1beta1)
// requests over HTTPS to a URL or a Service, and applies the answers
// (denials, JSON patches, warnings, audit annotations) with upstream's
// failure policies, error messages and metrics (k8s.io/apiserver
// pkg/admission/plugin/webhook, v1.37).
//
// Configurations are kept in memory by package configsource.
package webhook
