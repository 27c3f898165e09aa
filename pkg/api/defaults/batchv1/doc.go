// Package batchv1 holds kube-apiserver's defaulting of batch/v1 Jobs and
// CronJobs (upstream's pkg/apis/batch/v1/defaults.go and its generated
// covering defaulters), applied whenever such an object is decoded:
// request bodies, patches and storage reads.
//
// A Job's spec is defaulted by [SetDefaults_Job]; a CronJob's by
// [SetDefaults_CronJob], which, as upstream, leaves the job template's
// spec (completions, backoffLimit, ...) alone: only the pod failure
// policy patterns and the pod template inside it are defaulted. Pod
// templates are defaulted by package corev1, as for every workload.
package batchv1
