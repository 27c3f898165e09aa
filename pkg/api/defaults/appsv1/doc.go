// Package appsv1 holds kube-apiserver's defaulting of apps/v1 objects
// (Deployment, ReplicaSet, StatefulSet, DaemonSet and their lists), as
// kubernetes/kubernetes pkg/apis/apps/v1/defaults.go (v1.37) does it, with
// the feature gates of a v1.37 kube-apiserver at their defaults.
//
// Defaults are applied whenever an object is decoded (request bodies,
// patches, storage reads): [RegisterDefaults] registers them on the
// built-in scheme, whose decoders default through it. The pod template of
// each workload is defaulted as a pod is (pkg/api/defaults/corev1).
package appsv1
