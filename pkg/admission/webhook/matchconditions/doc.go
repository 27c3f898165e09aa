// Package matchconditions compiles and evaluates the CEL matchConditions
// of admission webhooks (and the expressions of admission policies):
// expressions over object, oldObject and request (the AdmissionRequest as
// a JSON map), with the Kubernetes CEL libraries of pkg/apiextensions/cel.
// Every condition must evaluate to a bool; the request matches when all of
// them are true, as upstream's matchconditions matcher decides.
package matchconditions
