// Package validating is the ValidatingAdmissionWebhook admission plugin: the
// ValidatingWebhookConfigurations' webhooks are called, in parallel,
// on every create, update, delete and connect they match, right before
// the object is stored; any refusal denies the request (package webhook
// does the work).
package validating
