// Package batch checks batch/v1 Jobs and CronJobs as kube-apiserver's
// pkg/apis/batch/validation does (v1.37), with the same field paths, error
// types and messages, on the versioned types of k8s.io/api.
//
// As in package validation, the Validate<Kind>Fields functions leave out
// the generic metadata rules, which the generic store checks itself; the
// strategies call them. Validate<Kind> checks a whole object.
//
// Pod templates: the template's restart policy, its labels against the
// selector and the generated selector labels are checked here; the rest
// of a pod template (containers, volumes, ...) is core's pod template
// validation (package validation/core), which [Options].PodTemplate
// supplies (the strategies pass it; the tables here test without it).
package batch
