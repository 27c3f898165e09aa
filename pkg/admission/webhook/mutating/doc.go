// Package mutating is the MutatingAdmissionWebhook admission plugin: the
// MutatingWebhookConfigurations' webhooks are called, in configuration
// name order, on every create, update, delete and connect they match, and
// their JSON patches applied to the object (package webhook does the
// work).
package mutating
