// Package certificatesv1 holds kube-apiserver's defaulting of
// certificates.k8s.io/v1: PodCertificateRequest's
// spec.maxExpirationSeconds (the +default=86400 marker of k8s.io/api
// certificates/v1 types.go, v0.37, which upstream's generated
// zz_generated.defaults.go applies).
package certificatesv1
