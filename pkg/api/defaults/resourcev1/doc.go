// Package resourcev1 holds kube-apiserver's defaulting of resource.k8s.io/v1
// (dynamic resource allocation), as kubernetes pkg/apis/resource/v1/defaults.go
// (v1.37): a device request (exactly, or each firstAvailable
// alternative) allocates ExactCount devices, one unless said otherwise; a
// device taint of a ResourceSlice gets the time it was added (now,
// truncated to the second).
package resourcev1
