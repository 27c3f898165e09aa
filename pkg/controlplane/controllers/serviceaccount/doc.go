// Package serviceaccount is the serviceaccount-controller of
// kube-controller-manager, run in-process: every active namespace has a
// ServiceAccount named "default", created when the namespace appears and
// recreated when it is deleted (upstream
// pkg/controller/serviceaccount/serviceaccounts_controller.go).
package serviceaccount
