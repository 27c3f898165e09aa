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
// # Configurations
//
// Configurations are read from their storage, as an informer would: a
// list, then a watch from its resourceVersion, re-listed when the watch
// ends ([Source]). A configuration written is in effect as soon as its
// watch event arrives (milliseconds; upstream's informers are eventually
// consistent too). Requests admitted before the first list wait for it up
// to [ReadyTimeout], then are refused as upstream refuses them: 403 "not
// yet ready to handle request".
package webhook
