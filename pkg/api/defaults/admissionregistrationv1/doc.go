// Package admissionregistrationv1 holds kube-apiserver's defaulting of
// admissionregistration.k8s.io/v1 webhook configurations, validating
// admission policies and their bindings (upstream's
// pkg/apis/admissionregistration/v1/defaults.go and its generated covering
// defaulters, v1.37), applied whenever such an object is decoded: request
// bodies, patches and storage reads.
package admissionregistrationv1
