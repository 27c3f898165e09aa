// Package daemonset serves apps/v1 daemonsets with their status
// subresource, as kube-apiserver's pkg/registry/apps/daemonset (v1.37):
// status is written only through /status, metadata.generation bumps on
// spec changes, the selector is immutable, and the template generation
// (upstream's internal spec.templateGeneration, served in apps/v1 as the
// annotation deprecated.daemonset.template.generation) starts at 1 and
// grows by one with each template change; clients cannot set it. No
// controller schedules daemon pods in kapi.
package daemonset
