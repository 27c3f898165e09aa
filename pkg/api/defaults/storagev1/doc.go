// Package storagev1 holds kube-apiserver v1.37's defaulting of
// storage.k8s.io/v1 objects (kubernetes/kubernetes
// pkg/apis/storage/v1/defaults.go and zz_generated.defaults.go), applied
// by the built-in scheme's decoders.
package storagev1
