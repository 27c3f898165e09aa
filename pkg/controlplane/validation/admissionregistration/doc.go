// Package admissionregistration validates admissionregistration.k8s.io/v1
// webhook configurations as kube-apiserver v1.37 does
// (kubernetes/kubernetes pkg/apis/admissionregistration/validation and
// k8s.io/apiserver pkg/util/webhook/validation.go): same field paths, error
// types and messages. Generic metadata is checked by the store.
package admissionregistration
