// Package mutatingwebhookconfiguration is the storage of admissionregistration.k8s.io/v1
// MutatingWebhookConfigurations (cluster-scoped), with upstream's strategy
// (pkg/registry/admissionregistration/mutatingwebhookconfiguration): the
// generation bumps when the webhooks change.
package mutatingwebhookconfiguration
