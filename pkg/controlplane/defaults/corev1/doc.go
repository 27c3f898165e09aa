// Package corev1 holds kube-apiserver's defaulting of core/v1 pods and pod
// templates (upstream's pkg/apis/core/v1/defaults.go, its generated
// covering defaulters and the declarative +default markers of
// k8s.io/api/core/v1), applied whenever such an object is decoded: request
// bodies, patches and storage reads.
//
// The SetDefaults_<Type> functions default one type; the
// SetObjectDefaults_<Type> functions default a type and everything it
// contains, in upstream's order. RegisterDefaults registers the latter for
// the top-level kinds (and their lists) on a scheme. Workload resources
// default their pod templates with [SetObjectDefaults_PodTemplateSpec],
// which is what upstream's generated defaulters of apps/v1, batch/v1 and
// core/v1 ReplicationController do for an embedded template.
//
// [PrepareForCreate] is the part of upstream's pod strategy that fills in
// fields on create (status phase and QoS class, generation, the
// scheduling-gated condition, label-key selector merges, AppArmor fields
// from the deprecated annotations).
package corev1
