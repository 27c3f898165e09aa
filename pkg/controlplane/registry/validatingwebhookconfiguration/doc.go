// Package validatingwebhookconfiguration is the storage of admissionregistration.k8s.io/v1
// ValidatingWebhookConfigurations (cluster-scoped), with upstream's strategy
// (pkg/registry/admissionregistration/validatingwebhookconfiguration): the
// generation bumps when the webhooks change.
package validatingwebhookconfiguration
