// Package networkingv1 holds kube-apiserver v1.37's defaulting of
// networking.k8s.io/v1 objects (kubernetes/kubernetes
// pkg/apis/networking/v1/defaults.go and zz_generated.defaults.go),
// applied by the built-in scheme's decoders.
package networkingv1
